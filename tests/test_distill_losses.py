"""Distillation losses (Burian 2023) against direct computations: CCA with known canonical correlations,
SoftCCA's decorrelation term and running covariance, max-marginals on a hand-made batch, and every λ/mask
combination option."""

import math

import pytest
import torch

from multivec.distill.combination import COMBINATIONS, combine_losses
from multivec.distill.losses import (CCALoss, CosineDistanceLoss, MaxMarginalsLoss, MSELoss, SoftCCALoss,
                                     StochasticDecorrelationLoss, contextual_loss, structural_loss)
from multivec.distill.losses.cca import canonical_correlations
from multivec.distill.projection import projection_head
from multivec.distill.configuration import LossConfig


def correlated_pair(n, rhos, extra=2, seed=0):
    """X and Y whose i-th columns share a latent with correlation rhos[i]; further columns independent noise."""
    g = torch.Generator().manual_seed(seed)
    k = len(rhos)
    z = torch.randn(n, k, generator=g, dtype=torch.float64)
    noise = torch.randn(n, k, generator=g, dtype=torch.float64)
    rho = torch.tensor(rhos, dtype=torch.float64)
    x = torch.cat([z, torch.randn(n, extra, generator=g, dtype=torch.float64)], dim=1)
    y = torch.cat([rho * z + torch.sqrt(1 - rho ** 2) * noise, torch.randn(n, extra, generator=g, dtype=torch.float64)],
                  dim=1)
    # Mix the columns: canonical correlations are invariant to invertible linear maps of either side.
    a = torch.randn(k + extra, k + extra, generator=g, dtype=torch.float64)
    b = torch.randn(k + extra, k + extra, generator=g, dtype=torch.float64)
    return x @ a, y @ b


def test_cca_recovers_known_canonical_correlations():
    x, y = correlated_pair(20000, [0.9, 0.6, 0.3], extra=2)
    # The random mixing makes some directions' variance tiny: no ridge here, so the estimate is unbiased.
    correlations = canonical_correlations(x, y, regularization=1e-9)
    assert correlations.shape == (5,)
    assert correlations[:3].tolist() == pytest.approx([0.9, 0.6, 0.3], abs=0.02)
    assert correlations[3:].abs().max() < 0.03
    loss = CCALoss(regularization=1e-9)(x, y)
    assert float(loss) == pytest.approx(-float(correlations.sum()), abs=1e-9)
    top2 = CCALoss(top_k=2, regularization=1e-9)(x, y)
    assert float(top2) == pytest.approx(-1.5, abs=0.03)


def test_cca_matches_a_direct_svd_and_has_gradients():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(50, 4, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.randn(50, 3, generator=g, dtype=torch.float64)
    xc, yc = x.detach() - x.detach().mean(0), y - y.mean(0)
    s11 = xc.T @ xc / 49 + 1e-3 * torch.eye(4, dtype=torch.float64)
    s22 = yc.T @ yc / 49 + 1e-3 * torch.eye(3, dtype=torch.float64)
    s12 = xc.T @ yc / 49

    def inv_sqrt(m):
        values, vectors = torch.linalg.eigh(m)
        return vectors @ torch.diag(values ** -0.5) @ vectors.T

    direct = torch.linalg.svdvals(inv_sqrt(s11) @ s12 @ inv_sqrt(s22))
    assert canonical_correlations(x, y).detach().tolist() == pytest.approx(direct.tolist(), abs=1e-8)
    CCALoss()(x, y).backward()
    assert x.grad is not None and torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0


def test_sdl_is_near_zero_for_decorrelated_and_large_for_correlated_inputs():
    g = torch.Generator().manual_seed(0)
    independent = torch.randn(4000, 8, generator=g)
    base = torch.randn(4000, 1, generator=g)
    correlated = base + 0.1 * torch.randn(4000, 8, generator=g)
    low = float(StochasticDecorrelationLoss(8, normalise=False)(independent))
    high = float(StochasticDecorrelationLoss(8, normalise=False)(correlated))
    assert low < 0.2 * 8  # 56 off-diagonal entries, each ~ 1/sqrt(4000)
    assert high > 50  # every off-diagonal entry ~ 0.99
    assert high > 100 * low / 2


def test_sdl_is_normalised_by_the_off_diagonal_count_by_default():
    """The authors' code divides the SDL by k^2 - k; the thesis's plain sum is one setting away."""
    g = torch.Generator().manual_seed(0)
    batch = torch.randn(8, 16, generator=g) + torch.randn(8, 1, generator=g)
    plain = float(StochasticDecorrelationLoss(16, normalise=False)(batch))
    default = float(StochasticDecorrelationLoss(16)(batch))
    assert default == pytest.approx(plain / (16 * 16 - 16), rel=1e-6)
    assert 0 < default <= 1  # a mean of |correlations|
    soft = SoftCCALoss(16, delta=0.03)
    loss = soft(batch, batch.flip(0))
    assert set(soft.last_terms) == {"soft_cca_mse", "sdl_student", "sdl_teacher"}
    assert float(loss) == pytest.approx(soft.last_terms["soft_cca_mse"] + 0.03 * (
        soft.last_terms["sdl_student"] + soft.last_terms["sdl_teacher"]), rel=1e-5)
    assert LossConfig().sdl_normalise is True


def _batch_norm(p):
    return (p - p.mean(0)) / torch.sqrt(p.var(0, unbiased=False) + 1e-5)


def test_sdl_running_covariance_after_two_steps_by_hand():
    g = torch.Generator().manual_seed(3)
    p1, p2 = torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g)
    sdl = StochasticDecorrelationLoss(3, alpha=0.95, normalise=False)
    sdl(p1)
    second = sdl(p2)
    c1 = _batch_norm(p1).T @ _batch_norm(p1) / 6
    c2 = _batch_norm(p2).T @ _batch_norm(p2) / 6
    running = 0.95 * c1 + c2  # C_2 = alpha * C_1 + C_mini, C_1 = C_mini(1)
    normaliser = 0.95 * 1 + 1
    assert torch.allclose(sdl.running_covariance, running, atol=1e-6)
    assert float(sdl.normaliser) == pytest.approx(normaliser)
    approx = running / normaliser
    expected = approx.abs().sum() - approx.diagonal().abs().sum()
    assert float(second) == pytest.approx(float(expected), rel=1e-5)
    # eval mode reads the running state but leaves it alone
    sdl.eval()
    sdl(p1)
    assert torch.allclose(sdl.running_covariance, running, atol=1e-6)


def test_soft_cca_is_mse_plus_delta_times_both_sdls():
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(8, 4, generator=g), torch.randn(8, 4, generator=g)
    loss = SoftCCALoss(4, delta=0.03, alpha=0.95)(a, b)
    sdl_a, sdl_b = StochasticDecorrelationLoss(4)(a), StochasticDecorrelationLoss(4)(b)  # both normalised
    assert float(loss) == pytest.approx(float(((a - b) ** 2).mean() + 0.03 * (sdl_a + sdl_b)), rel=1e-5)
    with pytest.raises(ValueError, match="same shape"):
        SoftCCALoss(4)(a, b[:, :3])


def test_max_marginals_on_a_hand_made_batch():
    student = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    teacher = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    # cosine distances D[i, j] = 1 - cos(y_i, t_j)
    r = 1 / math.sqrt(2)
    d = [[0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [1 - r, 1 - r, 1 - r]]
    expected = [d[i][i] - sum(d[i][j] for j in range(3) if j != i) / 2 for i in range(3)]
    got = MaxMarginalsLoss(gamma=1.0)(student, teacher)
    assert got.tolist() == pytest.approx(expected, abs=1e-6)
    # MSE distance, gamma 0.5
    sq = [[((student[i] - teacher[j]) ** 2).mean().item() for j in range(3)] for i in range(3)]
    expected_mse = [sq[i][i] - 0.5 * sum(sq[i][j] for j in range(3) if j != i) / 2 for i in range(3)]
    got_mse = MaxMarginalsLoss(gamma=0.5, distance="mse")(student, teacher)
    assert got_mse.tolist() == pytest.approx(expected_mse, abs=1e-6)


def test_mse_and_cosine_are_per_document():
    y = torch.tensor([[1.0, 2.0], [0.0, 1.0]])
    t = torch.tensor([[1.0, 0.0], [0.0, -1.0]])
    assert MSELoss()(y, t).tolist() == pytest.approx([2.0, 2.0])
    assert CosineDistanceLoss()(y, t).tolist() == pytest.approx([1 - 1 / math.sqrt(5), 2.0])
    with pytest.raises(ValueError, match="same shape"):
        MSELoss()(y, t[:, :1])


@pytest.mark.parametrize("option", COMBINATIONS)
def test_each_lambda_mask_combination(option):
    ls = torch.tensor([1.0, 2.0, 3.0, 4.0])
    lc = torch.tensor(10.0)
    mask = torch.tensor([1.0, 0.0, 1.0, 0.0])
    lam = 0.25
    got = float(combine_losses(ls, lc, mask, option=option, lam=lam))
    masked_mean = (1.0 + 3.0) / 2
    expected = {
        "authors": (lam * 2 / 4) * masked_mean + (1 - lam * 2 / 4) * 10.0,  # lambda != 0.5: weighted
        "eq_3_1": sum(lam * m * s for m, s in zip(mask.tolist(), ls.tolist())) / 4 + 10.0,
        "convex": sum(lam * m * s + (1 - lam * m) * 10.0 for m, s in zip(mask.tolist(), ls.tolist())) / 4,
        "unweighted": (1.0 + 3.0) / 4 + 10.0,
    }[option]
    assert got == pytest.approx(expected)
    # one side missing: the other alone (the authors' code still weights it when lambda != 0.5)
    alone_s = {"authors": lam * 2 / 4 * masked_mean}.get(option, 1.0)
    alone_c = {"authors": (1 - lam) * 10.0}.get(option, 10.0)
    assert float(combine_losses(ls, None, mask, option=option, lam=lam)) == pytest.approx(alone_s)
    assert float(combine_losses(None, lc, mask, option=option, lam=lam)) == pytest.approx(alone_c)


def test_authors_lambda_half_means_no_weighting_and_an_empty_mask_gives_no_structural_loss():
    """The authors' final code applies no weighting at lambda = 0.5 (``weighting = lam != 0.5``):
    L = masked mean of L_S + L_C; the old default (convex, 0.5) halved L_S."""
    ls = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    lc = torch.tensor(10.0)
    mask = torch.tensor([1.0, 0.0, 1.0, 0.0])
    assert LossConfig().combination == "authors" and LossConfig().lam == 0.5
    assert float(combine_losses(ls, lc, mask, option="authors", lam=0.5)) == pytest.approx(2.0 + 10.0)
    assert float(combine_losses(ls, None, mask, option="authors", lam=0.5)) == pytest.approx(2.0)
    assert float(combine_losses(None, lc, mask, option="authors", lam=0.5)) == pytest.approx(10.0)
    convex = float(combine_losses(ls, lc, mask, option="convex", lam=0.5))
    assert convex == pytest.approx((0.5 * 1 + 0.5 * 10 + 10 + 0.5 * 3 + 0.5 * 10 + 10) / 4)  # L_S halved
    none_inside = combine_losses(ls, lc, torch.zeros(4), option="authors", lam=0.5)
    assert float(none_inside) == pytest.approx(10.0)
    none_inside.backward()
    assert torch.count_nonzero(ls.grad) == 0  # no structural signal from a batch with no document inside the mask


def test_bad_names_are_refused_with_the_key():
    with pytest.raises(ValueError, match="distill.loss.combination"):
        combine_losses(torch.ones(2), torch.tensor(1.0), torch.ones(2), option="sum", lam=0.5)
    with pytest.raises(ValueError, match="distill.loss.structural"):
        structural_loss("l1")
    with pytest.raises(ValueError, match="distill.loss.contextual"):
        contextual_loss("pca", dim=4)


def test_projection_head_layers():
    head = projection_head(768, [768, 4096, 2048])
    shapes = [(m.in_features, m.out_features) for m in head if isinstance(m, torch.nn.Linear)]
    assert shapes == [(768, 768), (768, 4096), (4096, 2048)]
    assert sum(isinstance(m, torch.nn.ReLU) for m in head) == 2
    assert isinstance(projection_head(100, []), torch.nn.Identity)


def test_cca_gradients_stay_finite_when_the_batch_is_smaller_than_the_dimension():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(4, 8, generator=g, requires_grad=True)
    y = torch.randn(4, 10, generator=g)
    loss = CCALoss()(x, y)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(x.grad).all()
