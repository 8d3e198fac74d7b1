#!/usr/bin/env bash
# The rehearsal of every paper target (config/paper.yaml + config/rehearsal.yaml: the paper DAG on miniature
# inputs) submitted through a real SLURM on this machine, with the project's SLURM profile:
#   MULTIVEC_DATA_MIRROR=../shared/data bash scripts/slurm/rehearse_on_local_slurm.sh [WORK]
# Run as root (it starts the local SLURM: scripts/slurm/start_local_slurm.sh; stop it with
# scripts/slurm/stop_local_slurm.sh). WORK (default: rehearsal/, ignored by git) receives
#   WORK/mirror   the fixture mirror in the upstream formats (python -m multivec rehearsal-mirror), made from
#                 the demo mirror named by $MULTIVEC_DATA_MIRROR;
#   WORK/profile  profiles/slurm pointed at the local cluster (account multivec, partitions cpu and gpu);
#   WORK/run      a copy of the workflow the DAG runs in, so nothing in the checkout is touched; its
#                 results/rule_benchmarks.csv has the per-rule times, and WORK/run/snakemake.log the run's log.
# The LLM segmenter's OpenAI-compatible server runs on 127.0.0.1 for the run's length. Extra arguments after
# WORK go to Snakemake (e.g. --rerun-incomplete). Exit status: Snakemake's.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mkdir -p "${1:-$REPO/rehearsal}" && cd "${1:-$REPO/rehearsal}" && pwd)"
shift || true
PYTHON="$REPO/.venv/bin/python"
SNAKEMAKE="$REPO/.venv/bin/snakemake"
WORKFLOW_PARTS=(Snakefile rules workflow config profiles envs src scripts)  # as tests/conftest.py copies it

say() { echo "rehearse_on_local_slurm: $*"; }
die() { echo "rehearse_on_local_slurm: error: $*" >&2; exit 1; }

[ -x "$SNAKEMAKE" ] || die "no $SNAKEMAKE: install the project first (bash scripts/install.sh)"
[ -n "${MULTIVEC_DATA_MIRROR:-}" ] || die "set MULTIVEC_DATA_MIRROR to the demo data mirror (e.g. ../shared/data)"
DEMO_MIRROR="$(cd "$MULTIVEC_DATA_MIRROR" && pwd)" || die "MULTIVEC_DATA_MIRROR=$MULTIVEC_DATA_MIRROR is not a folder"

start=$SECONDS
bash "$REPO/scripts/slurm/start_local_slurm.sh"

if [ ! -f "$WORK/mirror/registry_overlay.json" ]; then
  say "writing the fixture mirror to $WORK/mirror"
  "$PYTHON" -m multivec rehearsal-mirror "$WORK/mirror" --from-mirror "$DEMO_MIRROR" > "$WORK/mirror.json"
fi
"$PYTHON" "$REPO/scripts/slurm/site_profile.py" --account multivec --cpu-partition cpu --gpu-partition gpu \
  "$WORK/profile" > /dev/null

mkdir -p "$WORK/run"
for part in "${WORKFLOW_PARTS[@]}"; do
  rm -rf "${WORK:?}/run/$part"
  cp -r "$REPO/$part" "$WORK/run/$part"
done

"$PYTHON" -m multivec.rehearsal.openai_server &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT

# Job groups: each SLURM job starts Snakemake twice (about 8 s of the job), so short jobs that follow one
# another go to SLURM together, and their rules run one after another inside one allocation (--cores 1: one
# job at a time, so a group asks for the largest memory and CPUs of its jobs and the sum of their times). A
# group holds rules of one partition. Chains: a distilled student's training, its task embeddings and its
# IMDB head; a NUGGET LM's training and its evaluation. Bundles of independent jobs that become ready
# together: the sub-sentence encoder's untrained baselines; the untrained student's and the structural
# teacher's embeddings; the document-task encodings (Lee, polarity) of several encoders; and, named by their
# wildcards so that a bundle is one model's, the PI and RR encodings of one encoder (Table 2, Table 4), then the
# PI and RR evaluations of one row.
# A group named by a wildcard whose value holds a slash (encoder, run: "nugget_mt_r0.1/seed13") has a slash in
# its job name, which Snakemake refuses once the group waits for more than 20 files (it then names a file after
# the job), and the SLURM plugin (2.8) loses that error, so the run waits forever. Such groups stay at two jobs
# (at most 15 files); the document encodings, which would make it three, form a group of their own.
GROUPING=(--cores 1
  --groups distill_student_train=student distill_student_embed=student distill_imdb_head=student
  train_nugget_lm=nugget_lm evaluate_nugget_lm=nugget_lm subencoder_eval_base=subencoder_base
  distill_untrained_embed=base_embeddings structural_teacher_embeddings=base_embeddings
  encode_documents=document_encodings "encode_task=encode_{encoder}" "evaluate_ranking=evaluate_{run}"
  "encode_nugget_ablation=ablation_encode_{name}_{seed}" "evaluate_nugget_ablation=ablation_evaluate_{name}_{seed}"
  --group-components subencoder_base=6 base_embeddings=4 document_encodings=8
  "encode_{encoder}=2" "evaluate_{run}=2" "ablation_encode_{name}_{seed}=2" "ablation_evaluate_{name}_{seed}=2")

say "running every paper target through SLURM in $WORK/run (log: $WORK/run/snakemake.log)"
status=0
# --slurm-init-seconds-before-status-checks: the plugin first looks at a job 40 s after submitting it, by
# default; rehearsal jobs take seconds.
(cd "$WORK/run" && MULTIVEC_DATA_MIRROR="$WORK/mirror" HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  TOKENIZERS_PARALLELISM=false "$SNAKEMAKE" all --profile "$WORK/profile" --slurm-init-seconds-before-status-checks 2 \
  "${GROUPING[@]}" "$@" --configfile config/paper.yaml config/rehearsal.yaml > snakemake.log 2>&1) || status=$?
say "finished with exit status $status after $((SECONDS - start)) s (SLURM start included)"
[ "$status" = 0 ] || tail -n 40 "$WORK/run/snakemake.log" >&2
exit "$status"
