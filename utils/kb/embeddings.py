"""Embedding functions for the knowledge base: `hash` (default), `minilm` and `gemini`.

- `hash`: deterministic feature hashing, no model and no network. Text goes through the same
  analyser as the lexical index (utils.text.analyze: folded words, stopwords dropped, stemming);
  features are the unigrams and adjacent bigrams, each hashed with blake2b to a bucket and a
  sign ("signed hashing"), counts damped with log(1 + tf), then L2-normalised. Same text gives
  the same vector in every process (Python's `hash()` is randomised per process, so not used).
  1024 dimensions: vector-only retrieval improves with the dimension up to there (bench/kb.py;
  docs/measurements.md); the price is Chroma's insert time, which grows with the dimension.
- `minilm`: Chroma's ONNX all-MiniLM-L6-v2 (384-d). Downloads its ~80 MB model once when
  online; offline it fails fast with a clear message instead of hanging.
- `gemini`: Gemini embeddings through google-genai (`client.models.embed_content`, the client from
  utils.clients), needs GEMINI_API_KEY; key and endpoint are handed in from Settings.

All three are Chroma `EmbeddingFunction` classes registered with Chroma's registry (names
`sleuth_hash`, `sleuth_minilm`, `sleuth_gemini`), so a collection records which function built
it and a later process rebuilds the same function from the stored config. chromadb, numpy and
google-genai are imported only when an embedding function is first built.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
from itertools import chain, repeat
from typing import Any
from urllib.parse import urlsplit

from ..config import EMBEDDINGS  # the setting's values, owned by the config
from ..errors import EmbeddingUnavailable
from ..text import analyze

HASH_DIM = 1024
GEMINI_MODEL = "gemini-embedding-001"
GEMINI_DIM = 768

# --------------------------------------------------------------------------------------------
# Feature hashing
# --------------------------------------------------------------------------------------------


class _Vocab:
    """term -> row in a growing table of 64-bit blake2b hashes (so each term is hashed once)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}  # from 1: 0 stands for "not seen yet"
        self.hashes = bytearray(8)
        self.lock = threading.Lock()

    def lookup(self, term_lists: list[list[str]]):
        import numpy as np

        flat_terms = list(chain.from_iterable(term_lists))
        n = len(flat_terms)
        with self.lock:
            ids = self.ids
            flat = np.fromiter(map(ids.get, flat_terms, repeat(0)), dtype=np.int64, count=n)
            if not flat.all():  # terms never seen: hash them once
                for t in dict.fromkeys(flat_terms[i] for i in np.flatnonzero(flat == 0).tolist()):
                    ids[t] = len(ids) + 1
                    self.hashes += hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest()
                flat = np.fromiter(map(ids.__getitem__, flat_terms), dtype=np.int64, count=n)
            table = np.frombuffer(bytes(self.hashes), dtype="<u8")
            if len(ids) > 2_000_000:  # bound memory in very long-running processes
                self.ids, self.hashes = {}, bytearray(8)
        return table[flat]


_vocab = _Vocab()
_BLOCK_ROWS = 512  # rows hashed per np.bincount: its n*dim counters then stay small and in cache


def hash_vectors_from_terms(term_lists: list[list[str]], dim: int = HASH_DIM):
    """float32 array (len(term_lists), dim) from analysed terms; see `hash_vectors`."""
    import numpy as np

    n = len(term_lists)
    out = np.zeros((n, dim), dtype=np.float32)
    lengths = np.fromiter((len(t) for t in term_lists), dtype=np.int64, count=n)
    if not int(lengths.sum()):
        return out
    hashes = _vocab.lookup(term_lists)
    ends = np.cumsum(lengths)
    for r0 in range(0, n, _BLOCK_ROWS):
        r1 = min(n, r0 + _BLOCK_ROWS)
        h = hashes[ends[r0] - lengths[r0] : ends[r1 - 1]]
        if not len(h):
            continue
        row = np.repeat(np.arange(r1 - r0, dtype=np.int64), lengths[r0:r1])
        # Bigram feature = a mix of its two unigram hashes (order-sensitive), for pairs in one text.
        same = row[:-1] == row[1:]
        big = h[:-1][same] * np.uint64(0x9E3779B97F4A7C15) ^ (h[1:][same] + np.uint64(0x632BE59BD9B4E019))
        big ^= big >> np.uint64(31)
        big *= np.uint64(0xBF58476D1CE4E5B9)
        big ^= big >> np.uint64(29)
        h = np.concatenate([h, big])
        row = np.concatenate([row, row[:-1][same]])
        if dim & (dim - 1) == 0:  # power of two: a mask is much cheaper than a 64-bit modulo
            bucket = (h & np.uint64(dim - 1)).astype(np.int64)
        else:
            bucket = (h % np.uint64(dim)).astype(np.int64)
        sign = 1.0 - 2.0 * (h >> np.uint64(63)).astype(np.float64)  # top bit: -1 or +1
        flat = np.bincount(row * dim + bucket, weights=sign, minlength=(r1 - r0) * dim).astype(np.float32)
        nz = np.flatnonzero(flat)
        vals = flat[nz]
        flat[nz] = np.copysign(np.log1p(np.abs(vals)), vals)  # damp repeated terms
        out[r0:r1] = flat.reshape(r1 - r0, dim)
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]
    norms[norms == 0] = 1.0
    out /= norms
    return out


def hash_vectors(texts: list[str], dim: int = HASH_DIM):
    """float32 array (len(texts), dim): signed feature hashing of unigrams + bigrams, L2-normalised."""
    return hash_vectors_from_terms([analyze(t) for t in texts], dim)


# --------------------------------------------------------------------------------------------
# Chroma EmbeddingFunction classes (built lazily: defining them needs chromadb)
# --------------------------------------------------------------------------------------------

_classes_lock = threading.Lock()
_classes: dict[str, type] = {}


def _probe(url: str, timeout: float = 5.0) -> None:
    """Fail fast (bounded time) if the host serving `url` cannot be reached."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    result: list[BaseException | None] = []

    def attempt() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            result.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported to the caller below
            result.append(exc)

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(timeout + 2)  # DNS lookups are not covered by the socket timeout
    if not result:
        raise OSError(f"no answer from {host}:{port} within {timeout:.0f} s")
    if result[0] is not None:
        raise result[0]


def embedding_classes() -> dict[str, Any]:
    """{'hash': cls, 'minilm': cls, 'gemini': cls}, defined and registered with Chroma once."""
    with _classes_lock:
        if _classes:
            return _classes
        import numpy as np
        from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
        from chromadb.utils.embedding_functions import register_embedding_function

        @register_embedding_function
        class SleuthHashEmbedding(EmbeddingFunction[Documents]):
            """Feature-hashing embedding (see module docstring); no model, no network."""

            def __init__(self, dim: int = HASH_DIM) -> None:
                self.dim = int(dim)

            def __call__(self, input: Documents) -> Embeddings:
                return list(hash_vectors(list(input), self.dim))

            @staticmethod
            def name() -> str:
                return "sleuth_hash"

            def default_space(self):
                return "cosine"

            def supported_spaces(self):
                return ["cosine", "ip", "l2"]

            def get_config(self) -> dict:
                return {"dim": self.dim}

            @staticmethod
            def build_from_config(config: dict) -> SleuthHashEmbedding:
                return SleuthHashEmbedding(dim=int(config.get("dim", HASH_DIM)))

            def validate_config_update(self, old_config: dict, new_config: dict) -> None:
                if old_config.get("dim") != new_config.get("dim"):
                    raise ValueError("the hash embedding's dimension cannot change")

        @register_embedding_function
        class SleuthMiniLMEmbedding(EmbeddingFunction[Documents]):
            """all-MiniLM-L6-v2 via Chroma's ONNX runtime wrapper, with a bounded offline failure."""

            def __init__(self) -> None:
                self._inner: Any = None  # chromadb's ONNXMiniLM_L6_V2, built on first use
                self._lock = threading.Lock()

            def _model(self):
                with self._lock:
                    if self._inner is None:
                        from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

                        inner = ONNXMiniLM_L6_V2()
                        folder = os.path.join(inner.DOWNLOAD_PATH, inner.EXTRACTED_FOLDER_NAME)
                        if not os.path.exists(os.path.join(folder, "model.onnx")):
                            try:
                                _probe(inner.MODEL_DOWNLOAD_URL)
                                inner._download_model_if_not_exists()
                            except Exception as exc:  # noqa: BLE001 - turned into one clear error
                                raise EmbeddingUnavailable(
                                    f"the MiniLM embedding model is not downloaded yet (~80 MB into "
                                    f"{inner.DOWNLOAD_PATH}) and downloading it failed: {exc}. Run once "
                                    f"while online, or use --embedding hash."
                                ) from exc
                        self._inner = inner
                    return self._inner

            def __call__(self, input: Documents) -> Embeddings:
                return self._model()(input)

            @staticmethod
            def name() -> str:
                return "sleuth_minilm"

            def default_space(self):
                return "cosine"

            def supported_spaces(self):
                return ["cosine", "ip", "l2"]

            def get_config(self) -> dict:
                return {"model": "all-MiniLM-L6-v2"}

            @staticmethod
            def build_from_config(config: dict) -> SleuthMiniLMEmbedding:
                return SleuthMiniLMEmbedding()

        @register_embedding_function
        class SleuthGeminiEmbedding(EmbeddingFunction[Documents]):
            """Gemini embeddings (google-genai). The API key and endpoint come from the caller (Settings),
            never from the collection's stored config."""

            def __init__(
                self, model: str = GEMINI_MODEL, dim: int = GEMINI_DIM, api_key: str = "", base_url: str = ""
            ) -> None:
                self.model = model
                self.dim = int(dim)
                self._api_key = api_key
                self._base_url = base_url
                self._client = None
                self._lock = threading.Lock()

            def _get_client(self):
                with self._lock:
                    if self._client is None:
                        if not self._api_key:
                            raise EmbeddingUnavailable("the gemini embedding needs GEMINI_API_KEY")
                        from ..clients import gemini_client

                        self._client = gemini_client(self._api_key, self._base_url)
                    return self._client

            def _embed(self, texts: list[str], task: str) -> Embeddings:
                from google.genai import types

                client = self._get_client()
                out: Embeddings = []
                for i in range(0, len(texts), 100):  # the API takes at most 100 texts per call
                    batch = texts[i : i + 100]
                    resp = client.models.embed_content(
                        model=self.model,
                        contents=batch,
                        config=types.EmbedContentConfig(task_type=task, output_dimensionality=self.dim),
                    )
                    for emb in resp.embeddings or []:
                        v = np.asarray(emb.values, dtype=np.float32)
                        norm = float(np.linalg.norm(v)) or 1.0
                        out.append(v / norm)  # truncated Gemini vectors are not unit length
                if len(out) != len(texts):
                    raise EmbeddingUnavailable(f"Gemini returned {len(out)} embeddings for {len(texts)} texts")
                return out

            def __call__(self, input: Documents) -> Embeddings:
                return self._embed(list(input), "RETRIEVAL_DOCUMENT")

            def embed_query(self, input: Documents) -> Embeddings:
                return self._embed(list(input), "RETRIEVAL_QUERY")

            @staticmethod
            def name() -> str:
                return "sleuth_gemini"

            def default_space(self):
                return "cosine"

            def supported_spaces(self):
                return ["cosine", "ip", "l2"]

            def get_config(self) -> dict:
                return {"model": self.model, "dim": self.dim}

            @staticmethod
            def build_from_config(config: dict) -> SleuthGeminiEmbedding:
                return SleuthGeminiEmbedding(
                    model=config.get("model", GEMINI_MODEL), dim=int(config.get("dim", GEMINI_DIM))
                )

        _classes.update(hash=SleuthHashEmbedding, minilm=SleuthMiniLMEmbedding, gemini=SleuthGeminiEmbedding)
        return _classes


def get_embedding_function(name: str, *, gemini_api_key: str = "", gemini_base_url: str = ""):
    """A Chroma embedding function for `name` (hash | minilm | gemini); the gemini one uses the given
    key and endpoint (from Settings: GEMINI_API_KEY, GEMINI_BASE_URL)."""
    if name not in EMBEDDINGS:
        raise ValueError(f"unknown embedding {name!r}; choose from {', '.join(EMBEDDINGS)}")
    cls = embedding_classes()[name]
    if name == "gemini":
        if not gemini_api_key:
            raise EmbeddingUnavailable("the gemini embedding needs GEMINI_API_KEY")
        return cls(api_key=gemini_api_key, base_url=gemini_base_url)
    return cls()
