# shellcheck shell=bash
# nodes.sh: hosts of our own on this machine, for running hlocheck across
# nodes under Open MPI without a cluster; sourced, never run (by
# test_nodes.sh and bench.sh).
#
# A host is a network namespace with its own hostname (UTS namespace), its
# own mounts (a /tmp and a /dev/shm of its own: ranks on different hosts
# share no files there) and its own System V IPC; the hosts meet on a
# bridge, itself in a namespace of its own, through veth pairs (10.77.0.N,
# named hN in each host's /etc/hosts).  Nothing is made in this machine's
# own network namespace.  Everything else -- the repository, the build --
# is seen by every host, as a cluster's shared home is.
#
# mpirun runs on host h1 with a hostfile; Open MPI starts its daemon on the
# other hosts through an rsh agent that enters the host's namespaces
# (nsenter), in place of ssh: no server needed.  TCP between hosts, shared
# memory within one.
#
#   nodes_can            true when namespaces can be made here; else false
#                        with the reason in nodes_why
#   nodes_up N           makes hosts h1..hN (and the bridge); sets
#                        nodes_dir (a scratch directory under the build,
#                        removed by nodes_down); host hK's /tmp is
#                        $nodes_dir/hK/tmp seen from outside
#   nodes_hostfile H R   the hostfile of hosts h1..hH, R slots each, at
#                        $nodes_dir/hostfile
#   nodes_run SECS H R CMD...   CMD on H hosts x R ranks each (rank r on
#                        host r / R + 1; mpirun --hostfile, started on h1),
#                        at most SECS seconds; mpirun's status
#   nodes_mpi_env        the environment mpirun needs there (for
#                        nodes_on 1 env "${nodes_mpi_env[@]}" mpirun ...)
#   nodes_on K CMD...    CMD inside host hK (its network, name and mounts)
#   nodes_kill K         kills every process of host hK: the host vanishes
#   nodes_down           ends every process of the hosts and removes the
#                        namespaces, links and scratch directory; safe to
#                        call twice and from a trap
#
# Open MPI 4 (orte) reads the launcher's settings as OMPI_MCA_plm_rsh_*,
# Open MPI 5 (PRRTE) as PRTE_MCA_plm_ssh_*: both are set.

nodes_prefix="hlo$$"        # namespace names: unique to this run
nodes_n=0
nodes_dir=""
nodes_holders=()

nodes_can() {
    nodes_why=""
    local t
    for t in ip unshare nsenter mpirun; do
        command -v "$t" >/dev/null 2>&1 || { nodes_why="no $t command"; return 1; }
    done
    [ "$(id -u)" -eq 0 ] || { nodes_why="not root (network namespaces need it)"; return 1; }
    if ! ip netns add "$nodes_prefix-probe" 2>/dev/null; then
        nodes_why="this machine forbids network namespaces (ip netns add failed)"
        return 1
    fi
    ip netns del "$nodes_prefix-probe" 2>/dev/null
    if ! unshare --uts --mount --ipc true 2>/dev/null; then
        nodes_why="this machine forbids UTS, mount or IPC namespaces (unshare failed)"
        return 1
    fi
}

# nodes_up N [PARENT]: PARENT (default build/) holds the scratch directory.
nodes_up() {
    local n=$1 parent=${2:-${build:-build}} i ready
    nodes_dir=$(mktemp -d "$(cd "$parent" && pwd)/nodes.XXXXXX") || return 1
    nodes_n=$n
    ip netns add "$nodes_prefix-sw" || return 1
    ip -n "$nodes_prefix-sw" link add br0 type bridge || return 1
    ip -n "$nodes_prefix-sw" link set br0 up || return 1
    {
        echo "127.0.0.1 localhost"
        for ((i = 1; i <= n; i++)); do echo "10.77.0.$i h$i"; done
    } >"$nodes_dir/hosts"
    for ((i = 1; i <= n; i++)); do
        local ns=$nodes_prefix-h$i
        ip netns add "$ns" || return 1
        ip link add "${nodes_prefix}v$i" type veth peer name eth0 netns "$ns" || return 1
        ip link set "${nodes_prefix}v$i" netns "$nodes_prefix-sw" || return 1
        ip -n "$nodes_prefix-sw" link set "${nodes_prefix}v$i" master br0 up || return 1
        ip -n "$ns" addr add "10.77.0.$i/24" dev eth0 || return 1
        ip -n "$ns" link set eth0 up || return 1
        ip -n "$ns" link set lo up || return 1
        mkdir -p "$nodes_dir/h$i/tmp"
        # The holder: a process that keeps the host's namespaces and whose
        # pid the agent enters.  Its mounts stay private to the host.
        ip netns exec "$ns" unshare --uts --mount --ipc --propagation private sh -c "
            hostname h$i && mount --bind '$nodes_dir/h$i/tmp' /tmp && mount -t tmpfs tmpfs /dev/shm &&
            mount --bind '$nodes_dir/hosts' /etc/hosts && echo \$\$ >'$nodes_dir/h$i.pid' && exec sleep infinity" \
            </dev/null >/dev/null 2>"$nodes_dir/h$i.err" &
        nodes_holders+=($!)
        disown $!      # ended by nodes_down, without the shell's "Killed" line
    done
    for ((ready = 0; ready < 100; ready++)); do
        for ((i = 1; i <= n; i++)); do [ -s "$nodes_dir/h$i.pid" ] || break; done
        [ "$i" -gt "$n" ] && break
        sleep 0.05
    done
    [ "$i" -gt "$n" ] || { nodes_why="host h$i did not come up: $(cat "$nodes_dir/h$i.err")"; return 1; }
    # The rsh agent: Open MPI runs "AGENT HOST COMMAND..." to start its
    # daemon on HOST.
    cat >"$nodes_dir/agent" <<EOF
#!/bin/sh
host=\$1
shift
exec nsenter -t "\$(cat '$nodes_dir'/\$host.pid)" --net --uts --mount --ipc sh -c "\$*"
EOF
    chmod +x "$nodes_dir/agent"
    # Shared memory within a host: Open MPI 5 calls its component sm
    # (vader before).
    local shm=vader
    case $(mpirun --version 2>/dev/null | head -n 1) in *" "[5-9].*) shm=sm ;; esac
    nodes_mpi_env=(OMPI_MCA_plm_rsh_agent="$nodes_dir/agent" OMPI_MCA_plm_rsh_no_tree_spawn=1
                   PRTE_MCA_plm_ssh_agent="$nodes_dir/agent" PRTE_MCA_plm_ssh_no_tree_spawn=1
                   OMPI_MCA_btl=tcp,$shm,self OMPI_MCA_btl_tcp_if_include=eth0
                   OMPI_MCA_oob_tcp_if_include=eth0 PRTE_MCA_oob_tcp_if_include=eth0
                   OMPI_MCA_mpi_yield_when_idle=1)
}

nodes_on() {
    local k=$1
    shift
    nsenter -t "$(cat "$nodes_dir/h$k.pid")" --net --uts --mount --ipc --wd="$PWD" "$@"
}

# nodes_hostfile H R: writes the hostfile of hosts h1..hH, R slots each,
# to $nodes_dir/hostfile.
nodes_hostfile() {
    local i
    for ((i = 1; i <= $1; i++)); do echo "h$i slots=$2"; done >"$nodes_dir/hostfile"
}

nodes_run() {
    local secs=$1 hosts=$2 per=$3
    shift 3
    nodes_hostfile "$hosts" "$per"
    nodes_on 1 env "${nodes_mpi_env[@]}" timeout "$secs" \
        mpirun --hostfile "$nodes_dir/hostfile" --map-by slot -np $((hosts * per)) "$@"
}

# The processes of host hK: those in its network namespace.
nodes_pids() { ip netns pids "$nodes_prefix-h$1" 2>/dev/null; }

nodes_kill() {
    local k=$1 pids
    pids=$(nodes_pids "$k" | grep -vx "$(cat "$nodes_dir/h$k.pid" 2>/dev/null)")
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    return 0
}

nodes_down() {
    local i pids
    [ -n "$nodes_dir" ] || return 0
    for ((i = 1; i <= nodes_n; i++)); do
        pids=$(nodes_pids "$i")
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    done
    [ ${#nodes_holders[@]} -gt 0 ] && kill -9 "${nodes_holders[@]}" 2>/dev/null
    for ((i = 1; i <= nodes_n; i++)); do ip netns del "$nodes_prefix-h$i" 2>/dev/null; done
    ip netns del "$nodes_prefix-sw" 2>/dev/null
    rm -rf "$nodes_dir"
    nodes_dir="" nodes_n=0 nodes_holders=()
}
