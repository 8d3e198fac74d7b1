"""The sub-sentence encoder's training loss (Chen et al. 2023, §3.2 and App. B), one module per loss:

- ``supcon``: supervised contrastive loss over the propositions of a batch (``supcon_loss``), all-gathered
  across ranks under DDP (``distributed_supcon_loss``).
"""

from __future__ import annotations

from multivec.subencoder.losses.supcon import LABEL_STRIDE, distributed_supcon_loss, supcon_loss

__all__ = ["LABEL_STRIDE", "distributed_supcon_loss", "supcon_loss"]
