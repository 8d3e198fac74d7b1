"""SupCon loss of the sub-sentence encoder against the formula of Khosla et al. (2020), L_out."""

import math

import pytest
import torch

from multivec.subencoder.losses.supcon import distributed_supcon_loss, supcon_loss


def brute_force_supcon(embeddings: torch.Tensor, labels: list[int], temperature: float) -> float:
    """-1/|P(i)| Σ_p log(exp(s_ip/τ) / Σ_{a≠i} exp(s_ia/τ)), cosine s, averaged over anchors with a positive."""
    x = [e / e.norm() for e in embeddings]
    losses = []
    for i in range(len(x)):
        positives = [p for p in range(len(x)) if p != i and labels[p] == labels[i]]
        if not positives:
            continue
        denominator = sum(math.exp(float(x[i] @ x[a]) / temperature) for a in range(len(x)) if a != i)
        losses.append(-sum(math.log(math.exp(float(x[i] @ x[p]) / temperature) / denominator)
                           for p in positives) / len(positives))
    return sum(losses) / len(losses)


@pytest.mark.parametrize("temperature", [0.1, 0.01, 0.5])
def test_supcon_matches_brute_force(temperature):
    generator = torch.Generator().manual_seed(0)
    embeddings = torch.randn(7, 5, generator=generator, dtype=torch.float64)
    # positive pairs (0, 1), (2, 4), (3, 5); 6 has no positive (it still serves as a negative)
    labels = [0, 0, 1, 2, 1, 2, 3]
    got = float(supcon_loss(embeddings, torch.tensor(labels), temperature))
    assert got == pytest.approx(brute_force_supcon(embeddings, labels, temperature), rel=1e-5)


def test_same_sentence_propositions_are_negatives_and_gradients_flow():
    embeddings = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], requires_grad=True)
    aligned = supcon_loss(embeddings, torch.tensor([0, 0, 1, 1]), 0.1)
    crossed = supcon_loss(embeddings, torch.tensor([0, 1, 0, 1]), 0.1)
    assert float(aligned.detach()) < float(crossed.detach())  # positives pulled together, distinct labels pushed apart
    aligned.backward()
    assert embeddings.grad is not None and float(embeddings.grad.abs().sum()) > 0


def test_single_process_distributed_loss_is_the_plain_loss():
    embeddings = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([0, 0, 1, 1, 2, 3])
    assert float(distributed_supcon_loss(embeddings, labels, 0.1)) == pytest.approx(
        float(supcon_loss(embeddings, labels, 0.1)))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="temperature"):
        supcon_loss(torch.randn(2, 3), torch.tensor([0, 0]), 0.0)
    with pytest.raises(ValueError, match=r"\(N, d\)"):
        supcon_loss(torch.randn(3, 3), torch.tensor([0, 0]), 0.1)


def _rank(rank: int, world: int, port: int, results) -> None:
    import os

    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        full = torch.randn(7, 4, dtype=torch.float64)
        # rank 0 holds pairs with local labels 0, 1; rank 1 holds pairs 0 and a proposition of its own (3 rows)
        rows = [slice(0, 4), slice(4, 7)][rank]
        labels = [torch.tensor([0, 1, 0, 1]), torch.tensor([0, 0, 1])][rank]
        mine = full[rows].clone().requires_grad_(True)
        loss = distributed_supcon_loss(mine, labels, 0.1)
        loss.backward()
        results[rank] = (float(loss.detach()), mine.grad.clone())
    finally:
        dist.destroy_process_group()


def test_ddp_gathers_embeddings_with_gradients_and_keeps_ranks_labels_apart():
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    manager = mp.Manager()
    results = manager.dict()
    mp.spawn(_rank, args=(2, port, results), nprocs=2, join=True)
    torch.manual_seed(0)
    full = torch.randn(7, 4, dtype=torch.float64).requires_grad_(True)
    # one process over the whole batch: rank 1's labels shifted so they never meet rank 0's
    expected = supcon_loss(full, torch.tensor([0, 1, 0, 1, 10, 10, 11]), 0.1)
    expected.backward()
    assert results[0][0] == pytest.approx(float(expected.detach())) == results[1][0]
    # every rank back-propagates the same loss: each slice's gradient arrives summed over the 2 ranks, and
    # DDP's averaging of parameter gradients then gives the one-process gradient
    torch.testing.assert_close(torch.cat([results[0][1], results[1][1]]), 2 * full.grad)
