"""Sub-sentence encoder (Chen et al. 2023)."""
