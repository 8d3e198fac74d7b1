"""Datasets: where they come from (``sources``), fetching (``download``), readers and corpus builders."""
