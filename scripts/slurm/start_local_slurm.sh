#!/usr/bin/env bash
# A real single-node SLURM on this machine, from Debian's packages, to run the workflow through
# `--profile` against (tests/test_slurm_cluster.py): munge, MariaDB + slurmdbd (the executor
# plugin polls jobs with sacct and validates accounts with sacctmgr), slurmctld and one slurmd.
#   cluster  multivec           node  this machine: all CPUs, memory less 2 GB
#   account  multivec           partitions  cpu (default), gpu (same node, no GPUs)
# Run as root on Debian/Ubuntu: `sudo bash scripts/slurm/start_local_slurm.sh`. It installs the packages
# it lacks (apt-get, non-interactive), writes /etc/slurm/slurm.conf and slurmdbd.conf from the templates
# beside it, and starts each daemon that is not running (no systemd needed: they are started directly).
# Safe to run again: what runs stays up (restarted only if its configuration changed); accounts are
# added once. It refuses to overwrite a slurm.conf it did not write. Stop: scripts/slurm/stop_local_slurm.sh.
# Environment: MULTIVEC_SLURM_DB_PORT (default 3307) for its own MariaDB instance on 127.0.0.1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLUSTER=multivec
ACCOUNT=multivec
CPU_PARTITION=cpu
GPU_PARTITION=gpu
STATE=/var/lib/multivec-slurm  # slurmctld/slurmd state, the MariaDB data folder, the DB password
RUN=/run/multivec-slurm        # pid files, the MariaDB socket
LOGS=/var/log/multivec-slurm
CONF=/etc/slurm
DB_PORT=${MULTIVEC_SLURM_DB_PORT:-3307}
DB_SOCKET=$RUN/mysql/mysqld.sock
MARK="# Written by multivec scripts/slurm/start_local_slurm.sh"
PACKAGES=(slurm-wlm slurmdbd munge mariadb-server)

say() { echo "start_local_slurm: $*"; }
die() { echo "start_local_slurm: error: $*" >&2; exit 1; }

# wait_for SECONDS WHAT LOG COMMAND...: polls COMMAND until it succeeds; on timeout stops naming LOG.
wait_for() {
  local seconds=$1 what=$2 log=$3; shift 3
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      [ -f "$log" ] && { echo "--- last lines of $log:" >&2; tail -n 20 "$log" >&2; }
      die "$what did not come up within ${seconds}s (log: $log)"
    fi
    sleep 0.5
  done
}

# running PIDFILE NAME: the process in PIDFILE is alive and is NAME.
running() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}

# stop_daemon PIDFILE NAME: TERM, then up to 30 s for it to exit.
stop_daemon() {
  running "$1" "$2" || return 0
  local pid; pid=$(cat "$1")
  say "configuration changed: restarting $2"
  kill -TERM "$pid"
  for _ in $(seq 60); do [ -d "/proc/$pid" ] || return 0; sleep 0.5; done
  die "$2 (pid $pid) did not stop within 30 s"
}

[ "$(id -u)" = 0 ] || die "run it as root (it installs packages and starts daemons): sudo bash $0"
command -v apt-get >/dev/null || die "apt-get not found: this script installs SLURM from Debian/Ubuntu packages"
mkdir -p "$STATE" "$RUN" "$LOGS"

# --- packages --------------------------------------------------------------------------------------------
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]} (apt-get; log: $LOGS/apt.log)"
  # Packages must not start their own daemons (here they are started below, with this configuration):
  # a policy-rc.d that denies it, only for the install and only if the machine has none.
  policy_created=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && policy_created=1
  fi
  install_packages() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$LOGS/apt.log" 2>&1; }
  status=0
  install_packages || { DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$LOGS/apt.log" 2>&1 && install_packages; } || status=$?
  ((policy_created)) && rm -f /usr/sbin/policy-rc.d
  ((status == 0)) || { tail -n 20 "$LOGS/apt.log" >&2; die "apt-get install ${missing[*]} failed (log: $LOGS/apt.log)"; }
fi

# --- configuration ---------------------------------------------------------------------------------------
NODE=$(hostname -s)
hardware=$(slurmd -C | head -n 1)
CPUS=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$hardware")
detected_mb=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hardware")
[ -n "$CPUS" ] && [ -n "$detected_mb" ] || die "could not read CPUs and RealMemory from 'slurmd -C': $hardware"
MEM_MB=$((detected_mb - 2048))
((MEM_MB >= 1024)) || die "this machine has ${detected_mb} MB of memory: too little for a SLURM node beside the daemons"

if [ ! -s "$STATE/db_password" ]; then
  (umask 077; head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 24 >"$STATE/db_password")
fi
render() {  # render TEMPLATE: the template with every @NAME@ filled in
  sed -e "s|@CLUSTER@|$CLUSTER|g" -e "s|@NODE@|$NODE|g" -e "s|@CPUS@|$CPUS|g" -e "s|@MEM_MB@|$MEM_MB|g" \
      -e "s|@CPU_PARTITION@|$CPU_PARTITION|g" -e "s|@GPU_PARTITION@|$GPU_PARTITION|g" -e "s|@STATE@|$STATE|g" \
      -e "s|@RUN@|$RUN|g" -e "s|@LOGS@|$LOGS|g" -e "s|@DB_PORT@|$DB_PORT|g" \
      -e "s|@DB_PASSWORD@|$(cat "$STATE/db_password")|g" "$1"
}
# write_conf TEMPLATE DEST MODE: writes DEST if it differs; returns 0 if it changed. A DEST this script did
# not write (no marker line) is never overwritten.
write_conf() {
  local new; new=$(render "$1")
  if [ -e "$2" ]; then
    grep -qF "$MARK" "$2" || die "$2 exists and was not written by this script: it is left alone (move it away to use this local SLURM)"
    [ "$new" = "$(cat "$2")" ] && return 1
  fi
  mkdir -p "$(dirname "$2")"
  (umask 077; printf '%s\n' "$new" >"$2.new")
  chmod "$3" "$2.new" && mv "$2.new" "$2"
  return 0
}
slurm_conf_changed=0; dbd_conf_changed=0
write_conf "$HERE/slurm.conf.in" "$CONF/slurm.conf" 644 && slurm_conf_changed=1
write_conf "$HERE/slurmdbd.conf.in" "$CONF/slurmdbd.conf" 600 && dbd_conf_changed=1
mkdir -p "$STATE/slurmctld" "$STATE/slurmd"

# --- munge -----------------------------------------------------------------------------------------------
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
if ! (munge -n | unmunge) >/dev/null 2>&1; then
  install -d -o munge -g munge -m 755 /run/munge
  install -d -o munge -g munge -m 700 /var/log/munge
  say "starting munged (log: /var/log/munge/munged.log)"
  runuser -u munge -- /usr/sbin/munged
  touch "$RUN/munged.started-here"  # stop_local_slurm.sh stops munged only if this script started it
  wait_for 30 munged /var/log/munge/munged.log bash -c 'munge -n | unmunge'
fi

# --- MariaDB (its own instance: data in $STATE/mysql, 127.0.0.1:$DB_PORT) --------------------------------
install -d -o mysql -g mysql -m 755 "$RUN/mysql"
touch "$LOGS/mariadb.log" && chown mysql:mysql "$LOGS/mariadb.log"
if [ ! -d "$STATE/mysql/mysql" ]; then
  say "creating the accounting database's data folder $STATE/mysql"
  mariadb-install-db --no-defaults --datadir="$STATE/mysql" --user=mysql --auth-root-authentication-method=socket \
    --skip-test-db >"$LOGS/mariadb-install.log" 2>&1 || die "mariadb-install-db failed (log: $LOGS/mariadb-install.log)"
fi
if ! running "$RUN/mysql/mariadbd.pid" mariadbd; then
  say "starting MariaDB on 127.0.0.1:$DB_PORT (log: $LOGS/mariadb.log)"
  setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$STATE/mysql" --socket="$DB_SOCKET" \
    --pid-file="$RUN/mysql/mariadbd.pid" --port="$DB_PORT" --bind-address=127.0.0.1 \
    --log-error="$LOGS/mariadb.log" --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
    </dev/null >/dev/null 2>&1 &
  wait_for 60 MariaDB "$LOGS/mariadb.log" mariadb-admin --no-defaults --socket="$DB_SOCKET" ping
fi
DB_PASSWORD=$(cat "$STATE/db_password")
mariadb --no-defaults --socket="$DB_SOCKET" -e "
  CREATE DATABASE IF NOT EXISTS slurm_acct_db;
  CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
  ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || die "could not create the accounting database (log: $LOGS/mariadb.log)"

# --- slurmdbd, the cluster and its account ---------------------------------------------------------------
if ((dbd_conf_changed)); then stop_daemon "$RUN/slurmdbd.pid" slurmdbd; fi
if ! running "$RUN/slurmdbd.pid" slurmdbd; then
  say "starting slurmdbd (log: $LOGS/slurmdbd.log)"
  slurmdbd
fi
wait_for 60 slurmdbd "$LOGS/slurmdbd.log" sacctmgr -n list cluster
sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER" || sacctmgr -i add cluster "$CLUSTER" >/dev/null
sacctmgr -n -P list account format=account | grep -qx "$ACCOUNT" ||
  sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description="multivec rehearsal" organization=multivec >/dev/null
users=(root)
[ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ] && users+=("$SUDO_USER")
for user in "${users[@]}"; do
  sacctmgr -n -P list association cluster="$CLUSTER" user="$user" account="$ACCOUNT" format=account | grep -qx "$ACCOUNT" ||
    sacctmgr -i add user "$user" account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
done

# --- slurmctld and slurmd --------------------------------------------------------------------------------
if ((slurm_conf_changed)); then
  stop_daemon "$RUN/slurmd.pid" slurmd
  stop_daemon "$RUN/slurmctld.pid" slurmctld
fi
if ! running "$RUN/slurmctld.pid" slurmctld; then
  say "starting slurmctld (log: $LOGS/slurmctld.log)"
  slurmctld
fi
wait_for 60 slurmctld "$LOGS/slurmctld.log" bash -c 'scontrol ping | grep -q UP'
if ! running "$RUN/slurmd.pid" slurmd; then
  say "starting slurmd (log: $LOGS/slurmd.log)"
  slurmd
fi
node_state() { sinfo -h -n "$NODE" -o %T; }
node_ready() { node_state | grep -qE '^(idle|mixed|allocated|completing)$'; }
deadline=$((SECONDS + 60))
until node_ready; do
  # a node left DOWN or DRAINED by an earlier run (e.g. a lost-node test) is resumed once
  if node_state | grep -qE '^(down|drain|drained|draining)'; then
    say "node $NODE is $(sinfo -h -n "$NODE" -o '%T (reason: %E)'); resuming it"
    scontrol update nodename="$NODE" state=resume
    wait_for 30 "node $NODE" "$LOGS/slurmd.log" node_ready
    break
  fi
  ((SECONDS < deadline)) || { tail -n 20 "$LOGS/slurmd.log" >&2; die "node $NODE is $(node_state) after 60 s (logs: $LOGS/slurmd.log, $LOGS/slurmctld.log)"; }
  sleep 0.5
done

say "local SLURM is up: cluster $CLUSTER, node $NODE ($CPUS CPUs, $MEM_MB MB), partitions $CPU_PARTITION (default) and $GPU_PARTITION (no GPUs), account $ACCOUNT"
say "logs: $LOGS/{slurmctld,slurmd,slurmdbd,mariadb}.log, /var/log/munge/munged.log"
say "stop: bash $HERE/stop_local_slurm.sh"
