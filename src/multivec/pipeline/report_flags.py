"""Which outputs of the workflow are flagged with ``report(...)``, read from the parsed Snakefile without
building anything: ``python -m multivec.pipeline.report_flags [--configfile F ...] [--directory D] [--out J]``
writes a JSON list of ``{"rule", "pattern", "category", "subcategory", "caption"}``, one per flagged output pattern
(``pattern`` with the rule's wildcard constraints written in, as ``rule_benchmarks.pattern_regex`` reads it).

Matched against the DAG's concrete outputs (``snakemake --summary``), it says which tables and figures a run
would put in the report, at any scale, in seconds. Snakemake has no command that lists report flags, so this
parses the workflow through Snakemake's Python API and reads its rules (``WorkflowApi._workflow``, not a
public attribute: the project pins Snakemake 9). Run it as its own process: the API changes directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def flagged_outputs(rules) -> list[dict[str, str | None]]:
    """One record per output pattern flagged with ``report(...)`` among Snakemake rule objects."""
    from snakemake.io import get_flag_value, is_flagged

    found = []
    for rule in rules:
        for output in rule.output:
            if not is_flagged(output, "report"):
                continue
            flag = get_flag_value(output, "report")
            caption = getattr(flag, "caption", None)
            if caption is not None and hasattr(caption, "get_path_or_uri"):
                caption = caption.get_path_or_uri(secret_free=True)
            found.append({"rule": rule.name, "pattern": str(output), "category": getattr(flag, "category", None),
                          "subcategory": getattr(flag, "subcategory", None),
                          "caption": str(caption) if caption is not None else None})
    return found


def main(argv=None) -> int:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (ConfigSettings, OutputSettings, Quietness, ResourceSettings,
                                          StorageSettings)

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snakefile", type=Path, default=Path("Snakefile"))
    parser.add_argument("--configfile", type=Path, nargs="*", default=[])
    parser.add_argument("--directory", type=Path, default=Path("."))
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here (default: stdout)")
    args = parser.parse_args(argv)
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(resource_settings=ResourceSettings(), storage_settings=StorageSettings(),
                                    config_settings=ConfigSettings(configfiles=[p.absolute() for p in args.configfile]),
                                    snakefile=args.snakefile.absolute(), workdir=args.directory.absolute())
        found = flagged_outputs(workflow_api._workflow.rules)
    text = json.dumps(found, indent=1) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
