#!/usr/bin/env bash
# Stops the local SLURM that scripts/slurm/start_local_slurm.sh started: slurmd, slurmctld, slurmdbd, its
# MariaDB instance, and munged if that script started it. Only processes named in its pid files
# (/run/multivec-slurm) are stopped. Jobs still running are cancelled first. State, accounts and logs
# (/var/log/multivec-slurm) stay: the next start picks them up. Safe to run when nothing runs.
set -euo pipefail

RUN=/run/multivec-slurm
LOGS=/var/log/multivec-slurm

say() { echo "stop_local_slurm: $*"; }
die() { echo "stop_local_slurm: error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run it as root: sudo bash $0"

# running PIDFILE NAME: the process in PIDFILE is alive and is NAME.
running() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}

# stop PIDFILE NAME: TERM, then up to 30 s for it to exit.
stop() {
  if ! running "$1" "$2"; then
    return 0
  fi
  local pid; pid=$(cat "$1")
  say "stopping $2 (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq 60); do
    [ -d "/proc/$pid" ] || return 0
    sleep 0.5
  done
  die "$2 (pid $pid) did not stop within 30 s: see $LOGS"
}

if running "$RUN/slurmctld.pid" slurmctld && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
  say "cancelling the jobs still queued or running: $(squeue -h -o %i | tr '\n' ' ')"
  squeue -h -o %i | xargs -r scancel
fi
stop "$RUN/slurmd.pid" slurmd
stop "$RUN/slurmctld.pid" slurmctld
stop "$RUN/slurmdbd.pid" slurmdbd
stop "$RUN/mysql/mariadbd.pid" mariadbd
if [ -e "$RUN/munged.started-here" ]; then
  stop /run/munge/munged.pid munged
  rm -f "$RUN/munged.started-here"
fi
say "stopped (logs stay in $LOGS)"
