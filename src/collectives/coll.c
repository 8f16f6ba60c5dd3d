/* coll.c: MPI start-up, devices, the communicator cache, the hook the
 * interpreter calls, statistics, and ending the job without hangs. */
#define _XOPEN_SOURCE 700      /* nftw */
#include "coll_internal.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One cached communicator per distinct group set. */
typedef struct CommEntry {
    CollGroups groups;      /* the flattened group set it was built for */
    CollComm comm;
} CommEntry;

/* What coll_narrow sets aside and coll_widen puts back. */
typedef struct CollWorld {
    MPI_Comm comm;
    int rank, world;
    InterpDevice device;
    CommEntry *comms;
    int n_comms, cap_comms;
} CollWorld;

struct Coll {
    MPI_Comm comm;          /* the ranks working now: MPI_COMM_WORLD, or the first n (coll_narrow) */
    int rank, world;        /* in comm */
    bool we_initialised;    /* MPI_Init was ours to call (and Finalize) */
    InterpDevice device;
    InterpComm hook;
    CommEntry *comms;
    int n_comms, cap_comms;
    CollStat *stats;
    int n_stats, cap_stats;
    CollP2p p2p;
    bool narrowed;
    CollWorld saved;        /* the whole job, while narrowed */
    char (*host)[COLL_HOST_NAME];   /* world rank r runs on host[r] */
    int n_hosts;            /* distinct names among them */
};

/* A tool started without a launcher is an MPI singleton: a job of one
 * process that talks to no one.  Open MPI's default start-up still probes
 * the network for its UCX messaging layer and (Open MPI 4) starts a helper
 * daemon: 0.34 s of every such run here, against 0.03 s with the
 * in-process layer and no daemon.  So a singleton asks for those, unless
 * the user's environment already chose.  Under mpirun or srun nothing is
 * touched: their ranks carry the launcher's variables, and the launcher's
 * choices (UCX across hosts) stand. */
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
/* Singletons without the daemon all name their session directory jf.0
 * under the same base, so two that run at once remove it under each other
 * ("A call to mkdir was unable to create the desired directory").  Each
 * gets a base of its own under $TMPDIR, needed only while MPI_Init makes
 * its tree: removed when MPI_Init returns, so that a run ended by
 * --timeout (_exit) or a signal leaves nothing behind, and again at exit
 * for anything made later (by the process that made it, not by a forked
 * child). */
static char session_base[4096];
static pid_t session_owner;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_session_base(void)
{
    if (session_base[0] && getpid() == session_owner)
        nftw(session_base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void singleton_without_daemon(void)
{
    if (getenv("OMPI_MCA_ess_singleton_isolated"))
        return;
    if (!getenv("OMPI_MCA_orte_tmpdir_base")) {
        const char *tmp = getenv("TMPDIR");
        snprintf(session_base, sizeof session_base, "%s/hlocheck-mpi.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(session_base)) {
            session_base[0] = '\0';
            return;             /* the daemon's start-up: slower, as safe */
        }
        session_owner = getpid();
        atexit(remove_session_base);
        setenv("OMPI_MCA_orte_tmpdir_base", session_base, 1);
    }
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 1);
}
#endif

void coll_singleton_defaults(void)
{
    static const char *const launched[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE" };
    for (size_t i = 0; i < sizeof launched / sizeof launched[0]; i++)
        if (getenv(launched[i]))
            return;
    setenv("OMPI_MCA_pml", "ob1", 0);
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    singleton_without_daemon();
#endif
}

/* ---- Hosts: the node each rank runs on, for messages that must name it
 * once a job spans several (a file one host lacks, a rank that failed
 * there).  The name is MPI's processor name: the host name. */

static void gather_hosts(Coll *c)
{
    char mine[COLL_HOST_NAME] = "";
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (MPI_Get_processor_name(name, &len) == MPI_SUCCESS && len > 0)
        snprintf(mine, sizeof mine, "%.*s", len, name);
    c->host = xcalloc((size_t)c->world, sizeof *c->host);
    if (MPI_Allgather(mine, COLL_HOST_NAME, MPI_CHAR, c->host, COLL_HOST_NAME, MPI_CHAR, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
        for (int r = 0; r < c->world; r++)
            snprintf(c->host[r], COLL_HOST_NAME, "%s", r == c->rank ? mine : "?");
    c->n_hosts = 0;
    for (int r = 0; r < c->world; r++) {
        int q = 0;
        while (q < r && strcmp(c->host[q], c->host[r]) != 0)
            q++;
        c->n_hosts += q == r;
    }
}

int coll_hosts(const Coll *c)
{
    return c->n_hosts;
}

const char *coll_host(const Coll *c, int rank)
{
    return rank >= 0 && rank < (c->narrowed ? c->saved.world : c->world) ? c->host[rank] : "?";
}

void coll_rank_name(const Coll *c, int rank, char *buf, size_t n)
{
    if (c->n_hosts > 1)
        snprintf(buf, n, "rank %d on %s", rank, coll_host(c, rank));
    else
        snprintf(buf, n, "rank %d", rank);
}

Coll *coll_init(int *argc, char ***argv)
{
    Coll *c = xcalloc(1, sizeof *c);
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        coll_singleton_defaults();
        MPI_Init(argc, argv);
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
        remove_session_base();
#endif
        c->we_initialised = true;
    }
    /* Errors come back as codes (turned into ERR_MPI), not as aborts. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    c->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->world);
    c->device = (InterpDevice){ c->rank, c->world, c->world, 1 };
    coll_p2p_init(&c->p2p);
    gather_hosts(c);
    return c;
}

bool coll_narrow(Coll *c, int n)
{
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(c->comm, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, &sub);
    c->saved = (CollWorld){ c->comm, c->rank, c->world, c->device, c->comms, c->n_comms, c->cap_comms };
    c->narrowed = true;
    c->comms = NULL;
    c->n_comms = c->cap_comms = 0;
    c->comm = sub;
    if (sub == MPI_COMM_NULL)
        return false;
    MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    MPI_Comm_rank(sub, &c->rank);
    MPI_Comm_size(sub, &c->world);
    c->device = (InterpDevice){ c->rank, c->world, c->world, 1 };
    return true;
}

static void free_comms(CommEntry *comms, int n)
{
    for (int i = 0; i < n; i++) {
        coll_groups_free(&comms[i].groups);
        if (comms[i].comm.comm != MPI_COMM_NULL)
            MPI_Comm_free(&comms[i].comm.comm);
    }
    free(comms);
}

void coll_widen(Coll *c)
{
    if (!c->narrowed)
        return;
    free_comms(c->comms, c->n_comms);
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
    c->comm = c->saved.comm;
    c->rank = c->saved.rank;
    c->world = c->saved.world;
    c->device = c->saved.device;
    c->comms = c->saved.comms;
    c->n_comms = c->saved.n_comms;
    c->cap_comms = c->saved.cap_comms;
    c->narrowed = false;
}

MPI_Comm coll_mpi_comm(const Coll *c)
{
    return c->comm;
}

CollP2p *coll_p2p(Coll *c)
{
    return &c->p2p;
}

int coll_rank(const Coll *c)
{
    return c->rank;
}

int coll_world(const Coll *c)
{
    return c->world;
}

const InterpDevice *coll_device(const Coll *c)
{
    return &c->device;
}

bool coll_setup_devices(Coll *c, const IrModule *m, int replicas, int partitions, InterpDevice *dev,
                        char *note, size_t note_size, Error *err)
{
    if (note_size)
        note[0] = 0;
    bool header = m->replica_count.present || m->num_partitions.present;
    int R = m->replica_count.present ? (int)m->replica_count.v : 1;
    int P = m->num_partitions.present ? (int)m->num_partitions.v : 1;
    if (replicas > 0)
        R = replicas;
    if (partitions > 0)
        P = partitions;
    if (!header && replicas <= 0 && partitions <= 0) {
        R = c->world;
        P = 1;
        if (c->world > 1)
            snprintf(note, note_size, "note: %s gives no replica_count or num_partitions; "
                     "running it as %d replicas", m->name, c->world);
    } else if (replicas <= 0 && partitions > 0 && !m->replica_count.present && c->world % P == 0) {
        R = c->world / P;
    } else if (partitions <= 0 && replicas > 0 && !m->num_partitions.present && c->world % R == 0) {
        P = c->world / R;
    }
    if ((long)R * P != c->world)
        return error_set(err, ERR_MISMATCH, (IrLoc){ m->file, 0, 0 },
                         "the module needs %d replicas x %d partitions = %ld devices, but %d MPI "
                         "ranks were started (mpirun -np %ld, or --replicas/--partitions)",
                         R, P, (long)R * P, c->world, (long)R * P);
    c->device = (InterpDevice){ c->rank, c->world, R, P };
    *dev = c->device;
    return true;
}

bool coll_mpi_ok(int rc, const IrInstr *instr, const char *what, Error *err)
{
    if (rc == MPI_SUCCESS)
        return true;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return error_set(err, ERR_MPI, instr->info->loc, "%s: %s failed: %s", ir_opcode_name(instr->op), what, msg);
}

/* ---- Communicators */

static CommEntry *find_comm(Coll *c, const CollGroups *g)
{
    for (int i = 0; i < c->n_comms; i++)
        if (coll_groups_equal(&c->comms[i].groups, g))
            return &c->comms[i];
    return NULL;
}

/* MPI_Comm_split with color = group, key = position: within the new
 * communicator, MPI rank == position in the group as listed.  A rank in no
 * group (collective-broadcast) gets MPI_COMM_NULL. */
static bool new_comm(Coll *c, const IrInstr *instr, const CollGroups *g, CollComm *out, Error *err)
{
    int position;
    int group = coll_find(g, c->rank, &position);
    MPI_Comm comm;
    if (!coll_mpi_ok(MPI_Comm_split(c->comm, group >= 0 ? group : MPI_UNDEFINED, group >= 0 ? position : 0,
                                    &comm), instr, "MPI_Comm_split", err))
        return false;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    out->comm = comm;
    out->size = group >= 0 ? g->start[group + 1] - g->start[group] : 0;
    out->position = position;
    return true;
}

bool coll_group_comm(Coll *c, const IrInstr *instr, CollComm *out, Error *err)
{
    CollGroups g;
    if (!coll_expand_groups(instr, c->device.replica_count, c->device.num_partitions, &g, err))
        return false;
    CommEntry *e = find_comm(c, &g);
    if (e) {
        *out = e->comm;
        coll_groups_free(&g);
        return true;
    }
    CollComm comm;
    if (!new_comm(c, instr, &g, &comm, err)) {
        coll_groups_free(&g);
        return false;
    }
    if (c->n_comms == c->cap_comms) {
        c->cap_comms = c->cap_comms ? 2 * c->cap_comms : 8;
        c->comms = xrealloc(c->comms, (size_t)c->cap_comms * sizeof *c->comms);
    }
    c->comms[c->n_comms++] = (CommEntry){ g, comm };
    *out = comm;
    return true;
}

/* ---- The hook */

int coll_leaves(Value *v, Value **out, int max)
{
    if (v->shape->type != IR_TYPE_TUPLE) {
        if (max > 0)
            out[0] = v;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < v->n_elements && n < max; i++)
        out[n++] = v->elements[i];
    return n;
}

bool coll_new_leaves(const IrShape *result, int n, Value **leaves, Error *err)
{
    for (int i = 0; i < n; i++) {
        const IrShape *rs = result->type == IR_TYPE_TUPLE ? result->elements[i] : result;
        if (!(leaves[i] = value_new_array(rs, err)))
            return false;
    }
    return true;
}

bool coll_check_same_shapes(const IrInstr *instr, const IrShape *result, Value *const *args, int n_args,
                            Error *err)
{
    bool tuple = result->type == IR_TYPE_TUPLE;
    if (tuple && result->n_elements != n_args)
        return error_set(err, ERR_SHAPE, instr->info->loc, "%s: %d operands but a result of %d elements",
                         ir_opcode_name(instr->op), n_args, result->n_elements);
    for (int i = 0; i < n_args; i++) {
        const IrShape *rs = tuple ? result->elements[i] : result;
        if (!ir_shape_equal(rs, args[i]->shape) || args[i]->shape->type == IR_TYPE_TUPLE)
            return error_set(err, ERR_SHAPE, instr->info->loc, "%s: result %s does not match operand %d",
                             ir_opcode_name(instr->op), ir_shape_str(rs), i);
    }
    return true;
}

bool coll_result(const IrShape *result, Value **leaves, int n, bool ok, Value **out, Error *err)
{
    if (!ok) {
        for (int i = 0; i < n; i++)
            value_release(leaves[i]);
        return false;
    }
    if (result->type != IR_TYPE_TUPLE) {
        *out = leaves[0];
        return true;
    }
    return (*out = value_new_tuple(result, n, leaves, err)) != NULL;
}

static const IrShape *result_shape(const IrInstr *instr)
{
    if ((instr->op == IR_OP_ALL_GATHER_START || instr->op == IR_OP_COLLECTIVE_PERMUTE_START) &&
        instr->shape->type == IR_TYPE_TUPLE && instr->shape->n_elements >= 2)
        return instr->shape->elements[1];
    return instr->shape;
}

double coll_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void record(Coll *c, const IrInstr *instr, const IrShape *result, double seconds, int group)
{
    for (int i = 0; i < c->n_stats; i++)
        if (strcmp(c->stats[i].name, instr->name) == 0 && c->stats[i].op == instr->op) {
            c->stats[i].seconds += seconds;
            c->stats[i].calls++;
            return;
        }
    if (c->n_stats == c->cap_stats) {
        c->cap_stats = c->cap_stats ? 2 * c->cap_stats : 16;
        c->stats = xrealloc(c->stats, (size_t)c->cap_stats * sizeof *c->stats);
    }
    CollStat *st = &c->stats[c->n_stats++];
    *st = (CollStat){ .op = instr->op, .group_size = group, .bytes = ir_shape_byte_size(result),
                      .seconds = seconds, .calls = 1 };
    snprintf(st->name, sizeof st->name, "%s", instr->name);
}

static bool dispatch(Coll *c, Interp *it, const IrInstr *instr, const IrShape *result,
                     Value *const *args, int n_args, Value **out, Error *err)
{
    switch ((int)instr->op) {
    case IR_OP_ALL_GATHER: case IR_OP_ALL_GATHER_START:
        return coll_all_gather(c, it, instr, result, args, n_args, out, err);
    case IR_OP_REDUCE_SCATTER:
        return coll_reduce_scatter(c, it, instr, result, args, n_args, out, err);
    case IR_OP_ALL_REDUCE: case IR_OP_ALL_REDUCE_START:
        return coll_all_reduce(c, it, instr, result, args, n_args, out, err);
    case IR_OP_ALL_TO_ALL:
        return coll_all_to_all(c, it, instr, result, args, n_args, out, err);
    case IR_OP_COLLECTIVE_PERMUTE: case IR_OP_COLLECTIVE_PERMUTE_START:
        return coll_collective_permute(c, it, instr, result, args, n_args, out, err);
    case IR_OP_COLLECTIVE_BROADCAST:
        return coll_collective_broadcast(c, it, instr, result, args, n_args, out, err);
    case IR_OP_RAGGED_ALL_TO_ALL:
        return coll_ragged_all_to_all(c, it, instr, result, args, n_args, out, err);
    case IR_OP_SEND:
        return coll_send(c, it, instr, result, args, n_args, out, err);
    case IR_OP_RECV:
        return coll_recv(c, it, instr, result, args, n_args, out, err);
    case IR_OP_SEND_DONE: case IR_OP_RECV_DONE:
        return coll_p2p_done(c, it, instr, result, args, n_args, out, err);
    default:
        return error_set(err, ERR_UNSUPPORTED, instr->info->loc, "unsupported op: %s",
                         ir_opcode_name(instr->op));
    }
}

static bool is_p2p(IrOpcode op)
{
    return op == IR_OP_SEND || op == IR_OP_RECV || op == IR_OP_SEND_DONE || op == IR_OP_RECV_DONE;
}

/* The bytes a collective moves: the data of send/recv(-done)'s tuples. */
static const IrShape *stat_shape(const IrInstr *instr, const IrShape *result)
{
    if (is_p2p(instr->op) && result->type == IR_TYPE_TUPLE && result->n_elements > 0)
        return result->elements[0];
    return result;
}

/* This rank's group (all-reduce's groups may differ in size); a pair for
 * send and recv. */
static int stat_group_size(Coll *c, const IrInstr *instr)
{
    if (is_p2p(instr->op))
        return 2;
    CollGroups g;
    int size = 1, position;
    Error ignore = { 0 };
    if (coll_expand_groups(instr, c->device.replica_count, c->device.num_partitions, &g, &ignore)) {
        int k = coll_find(&g, c->rank, &position);
        size = k >= 0 ? g.start[k + 1] - g.start[k] : 0;
        coll_groups_free(&g);
    }
    return size;
}

static bool run_hook(void *ctx, Interp *it, const IrInstr *instr, Value *const *args, int n_args,
                     Value **out, Error *err)
{
    Coll *c = ctx;
    const IrShape *result = result_shape(instr);
    double t0 = coll_now_seconds();
    bool ok = dispatch(c, it, instr, result, args, n_args, out, err);
    if (ok)
        record(c, instr, stat_shape(instr, result), coll_now_seconds() - t0, stat_group_size(c, instr));
    return ok;
}

const InterpComm *coll_comm(Coll *c)
{
    c->hook = (InterpComm){ c, run_hook };
    return &c->hook;
}

int coll_stats(const Coll *c, const CollStat **stats)
{
    *stats = c->stats;
    return c->n_stats;
}

/* ---- Agreement and ending the job */

bool coll_all_ok(Coll *c, bool ok)
{
    int mine = ok, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, c->comm);
    return all != 0;
}

bool coll_agree(Coll *c, bool ok, double timeout_s, bool *agreed)
{
    int mine = ok, all = 0, done = 0;
    MPI_Request req;
    MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_LAND, c->comm, &req);
    double deadline = coll_now_seconds() + timeout_s;
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done && !ok && coll_now_seconds() > deadline) {
            *agreed = false;
            return false;
        }
        if (!done) {
            struct timespec pause = { 0, 1000000 };
            nanosleep(&pause, NULL);
        }
    }
    *agreed = true;
    return all != 0;
}

int coll_node_ranks(Coll *c)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    return n > 0 ? n : 1;
}

int64_t coll_node_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : 0;
}

void coll_barrier(Coll *c)
{
    MPI_Barrier(c->comm);
}

void coll_finish(Coll *c, int code)
{
    coll_fold_cache_free();
    if (c && c->narrowed) {
        /* The ranks left out wait for the ones that stop here: they cannot
         * be told, so the job ends the hard way. */
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    if (c)
        coll_p2p_free(&c->p2p);
    fflush(stdout);
    fflush(stderr);
    if (c && c->we_initialised)
        MPI_Finalize();
    exit(code);
}

void coll_abort(Coll *c, int code)
{
    (void)c;
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static MPI_Op mpi_op(CollOp op)
{
    switch (op) {
    case COLL_SUM: return MPI_SUM;
    case COLL_MAX: return MPI_MAX;
    case COLL_MIN: return MPI_MIN;
    }
    return MPI_SUM;
}

void coll_allreduce_f64(Coll *c, double *v, int n, CollOp op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, mpi_op(op), c->comm);
}

void coll_allreduce_i64(Coll *c, int64_t *v, int n, CollOp op)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, mpi_op(op), c->comm);
}

void coll_allgather_u64(Coll *c, const uint64_t *mine, int n, uint64_t *all)
{
    MPI_Allgather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, c->comm);
}

void coll_bcast(Coll *c, void *buf, size_t n, int root)
{
    /* MPI counts are ints: in pieces of 1 GiB. */
    const size_t piece = (size_t)1 << 30;
    size_t off = 0;
    do {
        size_t k = n - off < piece ? n - off : piece;
        MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, root, c->comm);
        off += k;
    } while (off < n);
}
