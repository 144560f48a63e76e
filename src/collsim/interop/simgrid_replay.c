/* Replay of a collsim schedule, one MPI rank per collsim node, for SimGrid's SMPI (or any MPI).
 * Written by `collsim export simgrid --schedule ...` beside the platform; see docs/formats.md,
 * "SimGrid platforms", and docs/flow-simulator.md, "Cross-check with SimGrid's SMPI".
 *
 *   smpicc -O2 -o replay replay.c
 *   smpirun -np N -platform platform.xml -hostfile hosts.txt --cfg=... ./replay ranks
 *
 * Rank r reads DIR/rank-r.txt (DIR is the first argument, "ranks" by default):
 *
 *   collsim-replay 1 <rank> <ranks> <operations>
 *   <step> <s|r> <peer> <bytes>        one line per operation, by step, then by collsim transfer
 *
 * Per step, in file order, it posts an MPI_Irecv for every "r" line and an MPI_Isend for every "s"
 * line (receives first, tag = step), then waits for all of them (MPI_Waitall) before its next step:
 * no barrier, so a rank starts a step when its own earlier steps are done, as collsim's
 * simulate(mode="rank") and its MPI executor (src/collsim/mpi/executor.py) assume.  Messages
 * between the same pair in the same step match in order (MPI's non-overtaking rule), so the byte
 * counts of both ends agree.  No computation is done between the calls.
 *
 * Each rank prints "collsim-replay rank <r> start_s <t0> finish_s <t1>" (MPI_Wtime after MPI_Init
 * and after its last wait); the collective's time is the largest finish_s.  Under SMPI the buffer
 * is SMPI_SHARED_MALLOC'd (no payload memory, no copies); with another MPI it is malloc'd.
 *
 * SMPI puts ENVELOPE_BYTES = 16 more bytes on the wire than the MPI count (its message envelope:
 * tag, source, communicator), so under SMPI each message's count is the transfer's bytes minus 16
 * and the simulated network moves exactly collsim's bytes (a transfer under 16 bytes still moves
 * 16).  Build with -DENVELOPE_BYTES=0 to send the counts as they are. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef ENVELOPE_BYTES
#ifdef SMPI_SHARED_MALLOC
#define ENVELOPE_BYTES 16
#else
#define ENVELOPE_BYTES 0
#endif
#endif

typedef struct {
    long step;
    int send, peer;
    long long bytes;
} op_t;

static void fail(int rank, const char *what, const char *path)
{
    fprintf(stderr, "collsim-replay: rank %d: %s %s\n", rank, what, path);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double t0 = MPI_Wtime();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = argc > 1 ? argv[1] : "ranks";
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.txt", dir, rank);
    FILE *fh = fopen(path, "r");
    if (fh == NULL)
        fail(rank, "cannot open", path);
    int version, file_rank, ranks;
    long count;
    if (fscanf(fh, "collsim-replay %d %d %d %ld", &version, &file_rank, &ranks, &count) != 4 || version != 1 ||
        file_rank != rank || ranks != size || count < 0)
        fail(rank, "bad header (version 1, this rank, -np ranks) in", path);
    op_t *ops = malloc(sizeof(op_t) * (size_t)(count > 0 ? count : 1));
    long long biggest = 1;
    for (long i = 0; i < count; i++) {
        char kind;
        if (fscanf(fh, "%ld %c %d %lld", &ops[i].step, &kind, &ops[i].peer, &ops[i].bytes) != 4 ||
            (kind != 's' && kind != 'r') || ops[i].peer < 0 || ops[i].peer >= size || ops[i].bytes < 0 ||
            ops[i].bytes > 2147483647LL || (i > 0 && ops[i].step < ops[i - 1].step))
            fail(rank, "bad operation line in", path);
        ops[i].send = kind == 's';
        ops[i].bytes = ops[i].bytes > ENVELOPE_BYTES ? ops[i].bytes - ENVELOPE_BYTES : 0;
        if (ops[i].bytes > biggest)
            biggest = ops[i].bytes;
    }
    fclose(fh);
#ifdef SMPI_SHARED_MALLOC
    char *buf = SMPI_SHARED_MALLOC((size_t)biggest);
#else
    char *buf = malloc((size_t)biggest);  /* the payload is never read: one buffer serves every message */
#endif
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(count > 0 ? count : 1));
    for (long lo = 0; lo < count;) {
        long hi = lo, n = 0;
        while (hi < count && ops[hi].step == ops[lo].step)
            hi++;
        int tag = (int)(ops[lo].step % 32768);  /* MPI_TAG_UB is at least 32767 */
        for (int pass = 0; pass < 2; pass++)    /* receives, then sends */
            for (long i = lo; i < hi; i++)
                if (ops[i].send == pass) {
                    if (pass)
                        MPI_Isend(buf, (int)ops[i].bytes, MPI_BYTE, ops[i].peer, tag, MPI_COMM_WORLD, &req[n++]);
                    else
                        MPI_Irecv(buf, (int)ops[i].bytes, MPI_BYTE, ops[i].peer, tag, MPI_COMM_WORLD, &req[n++]);
                }
        MPI_Waitall((int)n, req, MPI_STATUSES_IGNORE);
        lo = hi;
    }
    double t1 = MPI_Wtime();
    printf("collsim-replay rank %d start_s %.17g finish_s %.17g\n", rank, t0, t1);
    fflush(stdout);
#ifdef SMPI_SHARED_MALLOC
    SMPI_SHARED_FREE(buf);
#else
    free(buf);
#endif
    free(req);
    free(ops);
    MPI_Finalize();
    return 0;
}
