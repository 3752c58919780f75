#!/usr/bin/env bash
# A throwaway single-node Slurm cluster on 127.0.0.1, for tests: its own munged (own key and
# socket), slurmctld and slurmd, every file under one directory, ports picked free at start.
# System services (a munged or slurmd the packages may have started) are neither used nor touched.
#
#   cluster.sh start DIR   create DIR (absolute or relative; fresh, or empty) and start the cluster;
#                          waits (bounded) until the node is idle, then prints the env line and
#                          writes DIR/env.sh (source it: SLURM_CONF=DIR/slurm.conf)
#   cluster.sh stop DIR    cancel the jobs, stop slurmd, slurmctld and munged, kill any stray
#                          slurmstepd of this cluster; idempotent
#   cluster.sh status DIR  exit 0 when all three daemons of DIR run
#
# Packages (Debian 12): slurmctld slurmd slurm-client munge. Runs as root (the CI case); as an
# unprivileged user too (SlurmUser/SlurmdUser = that user; jobs then run as that user only).
# Environment: SLURM_HARNESS_TIMEOUT (seconds to wait for the idle node, default 60);
# SLURM_HARNESS_CRED_EXPIRE (AuthInfo cred_expire, default 10: a requeued job waits that long);
# SLURM_HARNESS_EXTRA_CONF (lines appended to slurm.conf, e.g. "RequeueExit=75").
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }

sbin() { # the path of a daemon: PATH first, then /usr/sbin (not on an unprivileged PATH)
  command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } ||
    die "$1 not found (apt-get install slurmctld slurmd slurm-client munge)"
}

absdir() { mkdir -p "$1" && (cd "$1" && pwd -P); }

# Two distinct TCP ports nobody uses (slurmctld and slurmd bind 0.0.0.0), drawn from 10000-32767:
# below Linux's ephemeral range (32768-60999), so no outgoing connection holds one meanwhile.
free_ports() {
  local used=" " p picked="" _ local_addr
  while read -r _ local_addr _; do
    [[ "$local_addr" == *:* ]] && used="$used$((16#${local_addr##*:})) "
  done < <(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null)
  while [ "$(wc -w <<<"$picked")" -lt 2 ]; do
    p=$((10000 + (RANDOM * 32768 + RANDOM) % 22768))
    case "$used $picked " in *" $p "*) continue ;; esac
    picked="$picked $p"
  done
  echo "${picked# }"
}

alive() { # a zombie (exited, not yet reaped by its parent, often init) counts as gone
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

pid_of() { # the pid in a pid file, if that process is alive
  local f="$1" pid
  [ -s "$f" ] || return 1
  pid="$(tr -dc 0-9 <"$f")"
  [ -n "$pid" ] && alive "$pid" && echo "$pid"
}

# Whether a daemon is gone: its pid file names a dead process, or is still missing at `grace`
# (SECONDS). The forked daemon writes the file, possibly after its parent returned, and under
# load that can take a moment.
daemon_gone() {
  local f="$1" grace="$2"
  if [ -s "$f" ]; then
    ! pid_of "$f" >/dev/null
  else
    [ "$SECONDS" -ge "$grace" ]
  fi
}

# The slurmstepd processes of this cluster: they hold DIR/log/slurmd.log open.
stepds_of() {
  local dir="$1" p fd
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
    for fd in "$p"/fd/*; do
      case "$(readlink "$fd" 2>/dev/null)" in
        "$dir"/*) echo "${p#/proc/}"; break ;;
      esac
    done
  done
}

descendants() { # pid and every descendant of it
  local pid="$1" c
  echo "$pid"
  # shellcheck disable=SC2013 # the children files hold space-separated pids
  for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do descendants "$c"; done
}

# TERM the processes of some pid files together, wait up to $1 seconds, then KILL the rest.
stop_pidfiles() {
  local wait_s="$1" f pid i left
  shift
  local -a pids=()
  for f in "$@"; do
    if pid="$(pid_of "$f")"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for ((i = 0; i < wait_s * 10; i++)); do
    left=""
    for pid in "${pids[@]}"; do alive "$pid" && left="$left $pid"; done
    [ -n "$left" ] || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if alive "$pid"; then
      echo "cluster.sh: pid $pid ($(cat /proc/"$pid"/comm 2>/dev/null)) ignored TERM for ${wait_s}s: KILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.1; done
    fi
  done
  rm -f "$@"
}

show_logs() {
  local dir="$1" f
  for f in "$dir"/log/*.log; do
    [ -f "$f" ] || continue
    echo "===== $f (last 60 lines) =====" >&2
    tail -n 60 "$f" >&2
  done
}

write_conf() {
  local dir="$1" host="$2" ctld_port="$3" slurmd_port="$4" user="$5" cpus="$6"
  : >"$dir/plugstack.conf" # no SPANK plugins from /etc/slurm/plugstack.conf.d
  cat >"$dir/cgroup.conf" <<EOF
# Unused (proctrack/linuxproc, task/none); present so no daemon reads /etc/slurm/cgroup.conf.
CgroupPlugin=autodetect
EOF
  cat >"$dir/slurm.conf" <<EOF
# Throwaway test cluster written by tests/peers/slurm/cluster.sh
ClusterName=spillway-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
# cred_expire (default 120 s) is also how long a requeued job waits before it may start again.
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=${SLURM_HARNESS_CRED_EXPIRE:-10}
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$dir/plugstack.conf
TmpFS=$dir/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Schedule at once on submit and job end (batch_sched_delay defaults to 3 s per wave), and look
# at pending jobs every 1-2 s (defaults 60 and 30 s): a requeued job becomes eligible only later.
SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=1
MailProg=/bin/true
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
KillWait=2
InactiveLimit=0
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=256 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  if [ -n "${SLURM_HARNESS_EXTRA_CONF:-}" ]; then
    printf '# From SLURM_HARNESS_EXTRA_CONF\n%s\n' "$SLURM_HARNESS_EXTRA_CONF" >>"$dir/slurm.conf"
  fi
}

START_DIR=""
on_start_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ -n "$START_DIR" ]; then
    show_logs "$START_DIR"
    cmd_stop "$START_DIR" >/dev/null 2>&1 || true
  fi
}

cmd_start() {
  local dir host user cpus ctld_port slurmd_port timeout deadline t0 state sock
  [ $# -eq 1 ] || die "usage: cluster.sh start DIR"
  dir="$(absdir "$1")"
  [ ! -e "$dir/slurm.conf" ] || die "$dir already holds a cluster (stop it, use a fresh dir)"
  timeout="${SLURM_HARNESS_TIMEOUT:-60}"
  host="$(hostname -s 2>/dev/null || uname -n)"
  host="${host%%.*}"
  [ -n "$host" ] || die "no short hostname"
  getent hosts "$host" >/dev/null || echo "cluster.sh: note: $host does not resolve (NodeAddr=127.0.0.1 is used)" >&2
  user="$(id -un)"
  cpus="$(nproc)"
  read -r ctld_port slurmd_port < <(free_ports)
  # Unix socket paths are limited to 107 bytes: munged's and slurmd's step sockets live in DIR.
  sock="$dir/spool/${host}_4294967294.4294967294"
  [ "${#sock}" -le 107 ] || die "$dir is too long for Unix socket paths (use a shorter temp dir)"

  t0="$(date +%s.%N)"
  mkdir -p "$dir"/{state,spool,log,run,tmp}
  mkdir -m 0755 "$dir/munge"
  mungekey --create --bits=1024 --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
    { dd if=/dev/urandom of="$dir/munge/munge.key" bs=128 count=1 status=none && chmod 0400 "$dir/munge/munge.key"; }
  write_conf "$dir" "$host" "$ctld_port" "$slurmd_port" "$user" "$cpus"
  printf 'export SLURM_CONF=%q\n' "$dir/slurm.conf" >"$dir/env.sh"

  # On any failure from here: print the logs and take down whatever started.
  START_DIR="$dir"
  trap on_start_exit EXIT

  # munged forks and exits 0 only once its socket is up. It insists on execute-for-all on every
  # directory down to its socket (a mktemp -d dir is 0700): --force makes that a warning.
  "$(sbin munged)" --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" </dev/null >>"$dir/log/munged.log" 2>&1 ||
    die "munged failed to start"
  munge -S "$dir/munge/munge.socket" -n </dev/null | unmunge -S "$dir/munge/munge.socket" >/dev/null ||
    die "munged does not answer on $dir/munge/munge.socket"

  export SLURM_CONF="$dir/slurm.conf"
  # -i: ignore (absent) state; the daemons fork, write their pid files and close stdio.
  "$(sbin slurmctld)" -f "$dir/slurm.conf" -i </dev/null >>"$dir/log/slurmctld.log" 2>&1 ||
    die "slurmctld failed to start"
  "$(sbin slurmd)" -f "$dir/slurm.conf" -N "$host" </dev/null >>"$dir/log/slurmd.log" 2>&1 ||
    die "slurmd failed to start"

  # sinfo retries for long when no controller answers: bound each call, and watch the daemons.
  deadline=$((SECONDS + timeout))
  local grace=$((SECONDS + 10))
  while :; do
    ! daemon_gone "$dir/run/slurmctld.pid" "$grace" || die "slurmctld exited"
    ! daemon_gone "$dir/run/slurmd.pid" "$grace" || die "slurmd exited"
    state="$(timeout 5 sinfo -h -N -n "$host" -o '%T' 2>/dev/null || true)"
    [ "$state" = idle ] && break
    [ "$SECONDS" -lt "$deadline" ] || die "node $host not idle after ${timeout}s (state: '${state}')"
    sleep 0.2
  done
  trap - EXIT
  echo "cluster.sh: up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')s" \
    "(node $host, $cpus CPUs, slurmctld :$ctld_port, slurmd :$slurmd_port)" >&2
  cat "$dir/env.sh"
}

cmd_stop() {
  local dir p i
  [ $# -eq 1 ] || die "usage: cluster.sh stop DIR"
  [ -d "$1" ] || return 0
  dir="$(cd "$1" && pwd -P)"
  [ -d "$dir/run" ] || return 0
  # Cancel the jobs while the controller runs, so slurmstepd ends them and exits by itself.
  if pid_of "$dir/run/slurmctld.pid" >/dev/null && pid_of "$dir/run/slurmd.pid" >/dev/null; then
    export SLURM_CONF="$dir/slurm.conf"
    local jobs
    jobs="$(timeout 10 squeue -h -o '%A' 2>/dev/null | sort -u | tr '\n' ' ' || true)"
    if [ -n "${jobs// /}" ]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do # 10 s; what outlives it is killed below
        [ -z "$(timeout 5 squeue -h -o '%A' 2>/dev/null || true)" ] && [ -z "$(stepds_of "$dir")" ] && break
        sleep 0.2
      done
    fi
  fi
  stop_pidfiles 15 "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid"
  # Any slurmstepd still alive (a job that outlived its cancel) goes with its processes.
  for p in $(stepds_of "$dir"); do
    for i in $(descendants "$p"); do kill -KILL "$i" 2>/dev/null || true; done
  done
  stop_pidfiles 10 "$dir/run/munged.pid"
  echo "cluster.sh: stopped $dir" >&2
}

cmd_status() {
  local dir
  [ $# -eq 1 ] || die "usage: cluster.sh status DIR"
  dir="$1"
  pid_of "$dir/run/munged.pid" >/dev/null && pid_of "$dir/run/slurmctld.pid" >/dev/null &&
    pid_of "$dir/run/slurmd.pid" >/dev/null
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) shift; cmd_status "$@" ;;
  *) die "usage: cluster.sh start|stop|status DIR" ;;
esac
