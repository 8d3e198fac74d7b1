"""Analyses of trained NUGGET models beyond Table 2 (Qin & Van Durme 2023, §5-§7)."""
