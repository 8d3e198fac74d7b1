"""Table 5's PCA row (multivec.subencoder.pca_projection): the trained full SubEncoder followed by the projection
on the first principal components of its outputs on the training propositions."""

import pytest
import torch

from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.pca_projection import Moments, principal_components, training_outputs, with_pca_projection
from multivec.subencoder.tables.units import Layout, evaluation_path, table_rows
from multivec.subencoder.tables.paper_tables import pca_fit, retrieval_notes
from multivec.subencoder.training import SubEncoderTask
from multivec.training.engine import TrainConfig

WORDS = ["film", "Disney", "studio", "river", "bridge", "city", "album", "band", "king", "war"]


def training_rows(n=12):
    """Rows of the training format: each sentence with two propositions (its first and its last two words)."""
    rows = []
    for i in range(n):
        sentence = f"The {WORDS[i % 10]} met the {WORDS[(3 * i + 1) % 10]} near the {WORDS[(7 * i + 2) % 10]}."
        first, last = sentence.index(" ") + 1, sentence.rindex(" the ") + 5
        rows.append({"id": f"s{i}", "sentence": sentence, "pair_id": f"p{i // 2}",
                     "propositions": [{"char_spans": [[first, sentence.index(" met")]], "label": 2 * i},
                                      {"char_spans": [[last, len(sentence) - 1]], "label": 2 * i + 1}]})
    return rows


@pytest.fixture(scope="module")
def full():
    return SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", output_dim=16))


def test_principal_components_are_orthonormal_ordered_and_sign_fixed():
    torch.manual_seed(0)
    vectors = torch.randn(200, 6) * torch.tensor([5.0, 3.0, 2.0, 1.0, 0.5, 0.1]) + 7.0
    mean, directions, kept = principal_components(vectors, 3)
    torch.testing.assert_close(mean, vectors.mean(0))
    assert kept == pytest.approx(float(((vectors - mean) @ directions.T).var(0).sum() / vectors.var(0).sum()),
                                 rel=1e-4)
    torch.testing.assert_close(directions @ directions.T, torch.eye(3), atol=1e-5, rtol=0)
    variances = ((vectors - mean) @ directions.T).var(0)
    assert variances[0] > variances[1] > variances[2]
    # the data's axes are its principal directions, each with its largest entry positive
    torch.testing.assert_close(directions.abs().argmax(1), torch.tensor([0, 1, 2]))
    assert bool((directions.gather(1, directions.abs().argmax(1, keepdim=True)) > 0).all())
    _, flipped, _ = principal_components(-vectors, 3)
    torch.testing.assert_close(flipped, directions, atol=1e-5, rtol=0)


def test_streamed_moments_give_the_components_of_all_vectors_at_once():
    torch.manual_seed(1)
    vectors = torch.randn(300, 5) @ torch.randn(5, 5) + 3.0
    whole = principal_components(vectors, 2)
    streamed = principal_components(Moments.of(vectors.split(7)), 2)
    for a, b in zip(whole[:2], streamed[:2]):
        torch.testing.assert_close(a, b)
    assert whole[2] == pytest.approx(streamed[2])
    with pytest.raises(ValueError, match="no training proposition"):
        Moments.of([])


def test_principal_components_refuse_more_dimensions_than_the_vectors_span():
    with pytest.raises(ValueError, match="needs 1 <= dim"):
        principal_components(torch.randn(5, 8), 5)
    with pytest.raises(ValueError, match="needs 1 <= dim"):
        principal_components(torch.randn(50, 8), 9)


def test_the_projected_model_is_the_full_model_then_the_centred_projection(full, tmp_path):
    rows = training_rows()
    projected, fit = with_pca_projection(full, rows, 4)
    assert projected.output_dim == 4 and projected.config.projection_dim == 4 and fit["fit_propositions"] == 24
    assert 0 < fit["variance_kept"] <= 1
    vectors = training_outputs(full, rows)
    mean, directions, kept = principal_components(vectors, 4)
    assert fit["variance_kept"] == pytest.approx(kept, abs=1e-4)
    torch.testing.assert_close(training_outputs(projected, rows), (vectors - mean) @ directions.T,
                               atol=1e-5, rtol=1e-4)
    # the full model is unchanged and its head is the projected model's first three layers
    torch.testing.assert_close(training_outputs(full, rows), vectors)
    for a, b in zip(full.head.parameters(), projected.head[:3].parameters()):
        assert torch.equal(a, b)
    # a saved projected model loads as a 4-d SubEncoder that encodes the same vectors
    projected.save_pretrained(tmp_path / "pca", {"pca": fit})
    loaded = SubEncoder.load(tmp_path / "pca")
    assert loaded.output_dim == 4
    torch.testing.assert_close(training_outputs(loaded, rows), training_outputs(projected, rows))


def test_a_projection_is_fitted_never_trained_nor_stacked(full):
    config = SubEncoderConfig(encoder="tiny-random-bert", output_dim=16, projection_dim=4)
    with pytest.raises(ValueError, match="fitted after training"):
        SubEncoderTask(config, TrainConfig(max_steps=1), training_rows(), None)
    projected, _ = with_pca_projection(full, training_rows(), 4)
    with pytest.raises(ValueError, match="without a projection"):
        with_pca_projection(projected, training_rows(), 2)
    with pytest.raises(ValueError, match="needs head 'mlp'"):
        SubEncoderConfig(encoder="tiny-random-bert", head="none", projection_dim=4)


def test_table5_has_the_pca_row_only_when_configured():
    plain = table_rows("table5", Layout(("minilm",), ("mask_pooling",), 64))
    assert [r.row for r in plain] == ["SubEncoder (minilm)", "SubEncoder (minilm, 64-d)"]
    rows = table_rows("table5", Layout(("minilm",), ("mask_pooling",), 64, reduced_pca=True))
    assert [r.row for r in rows] == ["SubEncoder (minilm)", "SubEncoder (minilm, 64-d)",
                                     "SubEncoder (minilm), PCA 64-d"]
    assert evaluation_path(rows[2], 14) == "results/subencoder/retrieval/subencoder_minilm_pca64/seed14.json"
    subencoder = {"model": {"backbones": [{"name": "minilm"}], "reduced_dim": 64, "reduced_pca": True},
                  "evaluation": {"baselines": ["mask_pooling"]}}
    assert Layout.from_config(subencoder).reduced_pca
    # the table's note reads the fit from the PCA row's evaluation at the tables' seed
    fits = {"results/subencoder/retrieval/subencoder_minilm_pca64/seed13.json": {"pca": {"dim": 64}}}
    assert pca_fit(subencoder, 13, read=fits.__getitem__) == {"dim": 64}
    assert pca_fit({**subencoder, "model": {**subencoder["model"], "reduced_pca": False}}, 13, read=fits.__getitem__) is None
    note = retrieval_notes("table5", {"index": {"vectors_per_sentence": 4.0}, "dim": 384, "queries": 1, "candidates": 2,
                                      "candidate_sentences": 1, "candidate_documents": 1},
                           {**subencoder, "train": {"max_steps": 1, "batch_size": 1}}, "demo", [13],
                           {"dim": 64, "fit_propositions": 3007, "variance_kept": 0.93})
    assert any("3007 training propositions" in line and "93.0%" in line for line in note)
