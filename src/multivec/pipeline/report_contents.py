"""What a report built by ``snakemake --report`` holds: its results (path -> name, caption, MIME type, rule)
and categories (category -> subcategory -> paths), read back from the report's HTML, in a ``.zip`` report
or a standalone ``.html`` one. The HTML declares them as ``var results = {...};`` and
``var categories = {...};`` (Snakemake's HTML report plugin); a report without them is an error."""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class ReportContents:
    results: dict[str, dict[str, Any]]  # path -> {"name", "caption", "mime_type", "job_properties", ...}
    categories: dict[str, dict[str, list[str]]]  # category -> subcategory -> paths
    html: str
    files: dict[str, int]  # members of a .zip report (path -> bytes); empty for a .html report

    def category_of(self, path: str) -> str | None:
        return next((category for category, subs in self.categories.items()
                     if any(path in paths for paths in subs.values())), None)

    def embedded_size(self, path: str) -> int | None:
        """Bytes of the file the report embeds for result ``path`` (zip reports only)."""
        uri = self.results[path].get("data_uri", "")
        member = next((name for name in self.files if name.endswith("/" + uri)), None)
        return self.files.get(member) if member else None


def _declared(html: str, name: str) -> Any:
    prefix = f"var {name} = {{"  # a JSON object; the page's scripts declare other `var results` too
    for line in html.splitlines():
        text = line.strip()
        if text.startswith(prefix):
            return json.JSONDecoder().raw_decode(text, len(prefix) - 1)[0]
    raise ValueError(f"the report declares no `var {name} = {{...}}`: not a Snakemake HTML report, or its format "
                     "changed")


def read_report(path: str | os.PathLike) -> ReportContents:
    path = Path(path)
    files: dict[str, int] = {}
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            files = {info.filename: info.file_size for info in archive.infolist()}
            page = next((name for name in files if name.endswith("report.html")), None)
            if page is None:
                raise ValueError(f"{path}: no report.html inside")
            html = archive.read(page).decode("utf-8")
    else:
        html = path.read_text(encoding="utf-8")
    return ReportContents(_declared(html, "results"), _declared(html, "categories"), html, files)
