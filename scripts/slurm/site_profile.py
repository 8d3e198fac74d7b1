"""Writes a copy of profiles/slurm pointed at your cluster (multivec.pipeline.slurm_profile):

    .venv/bin/python scripts/slurm/site_profile.py --account ACCOUNT --cpu-partition CPU --gpu-partition GPU profiles/mysite
    snakemake --profile profiles/mysite --configfile config/paper.yaml results/table2.csv

`sacctmgr -n -s list user $USER format=account` lists your accounts, `sinfo -s` the partitions.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from multivec.pipeline.slurm_profile import ProfileError, write_site_profile  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("dest", help="folder to write config.yaml into (e.g. profiles/mysite)")
    parser.add_argument("--account", required=True, help="SLURM account every job is charged to (-A)")
    parser.add_argument("--cpu-partition", required=True, help="partition of the CPU jobs (-p)")
    parser.add_argument("--gpu-partition", required=True, help="partition of the jobs with a `gpu` resource")
    args = parser.parse_args()
    try:
        dest = write_site_profile(args.dest, args.account, args.cpu_partition, args.gpu_partition)
    except ProfileError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {dest / 'config.yaml'}; use it with: snakemake --profile {dest} ...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
