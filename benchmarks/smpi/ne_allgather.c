/* Neighbour-exchange all-gather (Chen et al. 2005), the schedule of
 * `collsim simulate ne --system ring -n 16 -s 1MiB` (src/collsim/algorithms/neighbor_exchange.py),
 * as an MPI program for SimGrid's SMPI (benchmarks/run.py, workload startup-vs-smpi).
 *
 *   smpicc -O2 -o ne_allgather ne_allgather.c
 *   smpirun -np 16 -platform ring16.xml -hostfile ring16.hosts \
 *       --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --cfg=network/crosstraffic:0 \
 *       --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 ./ne_allgather 1048576
 *
 * (those options make SimGrid's network model collsim's flow model: see SMPI_CFG in benchmarks/run.py)
 *
 * Round 0: ranks 2a and 2a+1 swap their own blocks.  Round s >= 1: even ranks talk to their left
 * neighbour when s is odd and to their right one when s is even (odd ranks the opposite), and each
 * rank forwards the pair of blocks it received in the previous round (blocks 2p and 2p+1, contiguous).
 * N/2 rounds for even N.  Rank 0 prints the simulated time (the latest finish over all ranks).
 *
 * Under SMPI the buffer comes from SMPI_SHARED_MALLOC, so no payload bytes are copied (collsim moves
 * none either); with a real MPI (mpicc), or smpicc -DNE_CHECK_DATA, it uses malloc and checks that
 * every rank ends with every block. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SMPI_SHARED_MALLOC) && !defined(NE_CHECK_DATA)  /* -DNE_CHECK_DATA: real buffers under SMPI too */
#define NE_SHARED 1
#endif

/* Partner of rank j in round s >= 1. */
static int partner(int j, int s, int n)
{
    int even = j % 2 == 0, to_right = s % 2 == 0 ? even : !even;
    return to_right ? (j + 1) % n : (j - 1 + n) % n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    size_t block = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1048576;
    if (n % 2 != 0) {
        if (rank == 0)
            fprintf(stderr, "neighbour exchange needs an even number of ranks, got %d\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#ifdef NE_SHARED
    char *buf = SMPI_SHARED_MALLOC(block * n);
#else
    char *buf = malloc(block * n);
    memset(buf + (size_t)rank * block, rank & 0x7f, block);
#endif
    int *pair = malloc(sizeof(int) * n), *next = malloc(sizeof(int) * n);  /* last pair received, per rank */
    for (int j = 0; j < n; j++)
        pair[j] = j / 2;

    double t0 = MPI_Wtime();
    int first = rank % 2 == 0 ? rank + 1 : rank - 1;
    MPI_Sendrecv(buf + (size_t)rank * block, (int)block, MPI_BYTE, first, 0,
                 buf + (size_t)first * block, (int)block, MPI_BYTE, first, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int s = 1; s < n / 2; s++) {
        for (int j = 0; j < n; j++)
            next[j] = pair[partner(j, s, n)];
        int p = partner(rank, s, n);
        MPI_Sendrecv(buf + (size_t)2 * pair[rank] * block, (int)(2 * block), MPI_BYTE, p, s,
                     buf + (size_t)2 * pair[p] * block, (int)(2 * block), MPI_BYTE, p, s,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int *t = pair; pair = next; next = t;
    }
    double elapsed = MPI_Wtime() - t0, latest;

    MPI_Reduce(&elapsed, &latest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int bad = 0;
#ifndef NE_SHARED
    for (int j = 0; j < n; j++)
        bad |= buf[(size_t)j * block] != (char)(j & 0x7f) || buf[(size_t)(j + 1) * block - 1] != (char)(j & 0x7f);
#endif
    int any_bad = 0;
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ne allgather N=%d block=%zu simulated_s=%.9e%s\n", n, block, latest, any_bad ? " WRONG DATA" : "");
#ifdef NE_SHARED
    SMPI_SHARED_FREE(buf);
#else
    free(buf);
#endif
    free(pair);
    free(next);
    MPI_Finalize();
    return rank == 0 && any_bad;
}
