"""Datasets: where they come from (``sources``), fetching (``download``), readers and corpus builders.

Without a data mirror: ``builders`` (files built here, e.g. ``debian_reference``'s pairs from the Debian
packages), ``needs`` (which files a configuration reads), ``availability`` (which of them cannot be obtained
here, for the check before any job) and ``mirror`` (``python -m multivec mirror``: write a mirror of a scale).
"""
