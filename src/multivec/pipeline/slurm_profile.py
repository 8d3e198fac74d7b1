"""A site copy of the SLURM profile: ``profiles/slurm/config.yaml`` with its three placeholders,
``CHANGE_ME_account``, ``CHANGE_ME_cpu_partition`` and ``CHANGE_ME_gpu_partition``, replaced by a cluster's
account and partitions, everything else (comments included) kept. ``scripts/slurm/site_profile.py`` is its
command line; ``tests/test_slurm_cluster.py`` points the profile at the local SLURM this way, the same
way a user points it at a real cluster.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

SHIPPED = Path(__file__).resolve().parents[3] / "profiles" / "slurm"
PLACEHOLDERS = {"account": "CHANGE_ME_account", "cpu_partition": "CHANGE_ME_cpu_partition",
                "gpu_partition": "CHANGE_ME_gpu_partition"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # SLURM account/partition names; nothing YAML or a shell reads


class ProfileError(ValueError):
    """The site profile cannot be written as asked; the message says which value or file."""


def site_profile_text(shipped: str, account: str, cpu_partition: str, gpu_partition: str,
                      extra: Mapping[str, object] | None = None) -> str:
    """The shipped profile's text with the placeholders replaced and ``extra`` top-level keys appended."""
    import yaml

    values = {"account": account, "cpu_partition": cpu_partition, "gpu_partition": gpu_partition}
    text = shipped
    for key, placeholder in PLACEHOLDERS.items():
        if not _NAME.fullmatch(values[key]):
            raise ProfileError(f"{key}={values[key]!r}: not a SLURM name (letters, digits, '_', '.', '-')")
        if f'"{placeholder}"' not in text:
            raise ProfileError(f"the shipped profile has no \"{placeholder}\" any more: update "
                               f"multivec.pipeline.slurm_profile.PLACEHOLDERS to what it asks to fill in")
        text = text.replace(f'"{placeholder}"', f'"{values[key]}"')
    if "CHANGE_ME" in text:
        line = next(i for i, row in enumerate(text.splitlines(), 1) if "CHANGE_ME" in row)
        raise ProfileError(f"the shipped profile has a placeholder this tool does not fill (line {line}): "
                           "update multivec.pipeline.slurm_profile.PLACEHOLDERS")
    if extra:
        present = set(yaml.safe_load(text) or {})
        clash = sorted(set(extra) & present)
        if clash:
            raise ProfileError(f"extra keys already in the profile: {', '.join(clash)}")
        text = text.rstrip("\n") + "\n# Added for this site:\n" + yaml.safe_dump(dict(extra), sort_keys=False)
    return text


def write_site_profile(dest: str | Path, account: str, cpu_partition: str, gpu_partition: str,
                       extra: Mapping[str, object] | None = None, shipped: str | Path = SHIPPED) -> Path:
    """Writes ``dest/config.yaml``: the shipped profile pointed at ``account`` and the partitions; returns ``dest``."""
    dest = Path(dest)
    if dest.resolve() == Path(shipped).resolve():
        raise ProfileError(f"{dest} is the shipped profile itself: write the site copy elsewhere")
    text = site_profile_text((Path(shipped) / "config.yaml").read_text(encoding="utf-8"), account, cpu_partition,
                             gpu_partition, extra)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "config.yaml").write_text(text, encoding="utf-8")
    return dest
