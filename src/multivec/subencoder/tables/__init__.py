"""The sub-sentence encoder's results tables (Chen et al. 2023, Tables 1, 3, 4, 5, 7, 8):

- ``units``: every table's rows and metrics, and the per-unit scores the statistics layer reads (imported by
  the workflow while it parses: no pandas, no torch);
- ``paper_tables``: the tables, ours beside the paper's, as CSV and Markdown.
"""
