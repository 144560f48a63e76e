"""The rules an MSCCL algorithm XML must follow before its executor accepts it.

Each rule comes from msccl-executor-nccl's parser and kernel (``msccl_parser.cc``,
``msccl_struct.h``, ``msccl_kernel.cu``; M. Cowan et al., "MSCCLang", ASPLOS 2023):
gpus 0..N-1 once each; thread blocks numbered 0, 1, 2, ... without gaps; peers other
ranks or -1, never the gpu itself; channels below ``nchannels``; one send and one
receive thread block per (peer, channel) (each is one NCCL connection); steps numbered
0, 1, 2, ... (``deps`` names them, nops included); a known step type and buffers;
``cnt`` from 1 to the limit; offsets inside the buffers; a send needs a send peer and
a receive a receive peer; at most one dependency per step, on another thread block of
the same gpu and a step it has; every awaited step has ``hasdep="1"``; a nop's
dependency is carried to the next real step, which must itself have one; and the
executor's limits (:class:`~collsim.interop.msccl.xml_model.MscclLimits`).
"""

from __future__ import annotations

from .errors import MscclFormatError, MscclLimitError
from .layout import Layout, layout_of
from .xml_model import BUFFERS, PROTOS, RECVS, SENDS, STEP_TYPES, MscclAlgo, MscclLimits


def _fmt(g, tb=None, st=None) -> str:
    return f"gpu {g}" + (f", tb {tb}" if tb is not None else "") + (f", step {st}" if st is not None else "")


def check_algo(algo: MscclAlgo, limits: MscclLimits = MscclLimits(), root: int | None = None) -> Layout:
    """Check every rule of the format and every limit of the executor; raise the first broken."""
    n = algo.ngpus
    if algo.proto not in PROTOS:
        raise MscclFormatError(f"algo: proto={algo.proto!r} is not one of {', '.join(PROTOS)}")
    if n < 2:
        raise MscclFormatError(f"algo: ngpus={n}, need at least 2")
    for name, value in (("inplace", algo.inplace), ("outofplace", algo.outofplace)):
        if value not in (0, 1):
            raise MscclFormatError(f"algo: {name}={value}, must be 0 or 1")
    if not 1 <= algo.nchannels <= limits.max_channels:
        raise MscclLimitError(f"algo: nchannels={algo.nchannels}, must be 1..{limits.max_channels} "
                              f"(the executor's MAXCHANNELS; --max-channels)")
    if algo.min_bytes < 0 or algo.max_bytes < 0:
        raise MscclFormatError(f"algo: minBytes={algo.min_bytes} and maxBytes={algo.max_bytes} must be >= 0")
    lay = layout_of(algo.coll, n, algo.nchunksperloop, root)
    ids = [g.id for g in algo.gpus]
    if sorted(ids) != list(range(n)):
        raise MscclFormatError(f"algo: gpu ids are {sorted(ids)}, expected 0..{n - 1} once each")
    for g in algo.gpus:
        _check_gpu(g, lay, algo.nchannels, limits)
    return lay


def _check_gpu(g, lay: Layout, nchannels: int, limits: MscclLimits) -> None:  # noqa: C901
    sizes = {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
    true = {"i": lay.in_size, "o": lay.out_size, "s": g.s_chunks}
    for b, size in sizes.items():
        if size < 0:
            raise MscclFormatError(f"{_fmt(g.id)}: {b}_chunks={size} is negative")
    ids = sorted(tb.id for tb in g.tbs)
    if ids != list(range(len(ids))):
        missing = sorted(set(range(max(ids) + 1)) - set(ids)) if ids else []
        raise MscclFormatError(f"{_fmt(g.id)}: thread blocks must be numbered 0..{len(ids) - 1} without gaps or "
                               f"repeats, got {ids}" + (f" (tb {missing[0]} is missing)" if missing else ""))
    if len(ids) > limits.max_thread_blocks:
        raise MscclLimitError(f"{_fmt(g.id)}: {len(ids)} thread blocks, above the executor's limit of "
                              f"{limits.max_thread_blocks} per gpu (--max-thread-blocks)")
    nsteps = {tb.id: len(tb.steps) for tb in g.tbs}
    awaited: dict[tuple[int, int], tuple[int, int]] = {}
    conns: dict[tuple[str, int, int], int] = {}
    per_chan: dict[tuple[str, int], int] = {}
    for tb in g.tbs:
        where = _fmt(g.id, tb.id)
        for what, peer in (("send", tb.send), ("recv", tb.recv)):
            if peer == g.id:
                raise MscclFormatError(f"{where}: {what} peer is the gpu itself ({peer}); use -1 for none")
            if not -1 <= peer < lay.ngpus:
                raise MscclFormatError(f"{where}: {what} peer {peer} is not a rank (0..{lay.ngpus - 1}) or -1")
            if peer >= 0:
                key = (what, peer, tb.chan)
                if key in conns:
                    raise MscclFormatError(f"{where}: a second thread block (after tb {conns[key]}) with {what} peer "
                                           f"{peer} on channel {tb.chan}; one connection per peer and channel")
                conns[key] = tb.id
                per_chan[(what, tb.chan)] = per_chan.get((what, tb.chan), 0) + 1
                if per_chan[(what, tb.chan)] > limits.max_tbs_per_channel:
                    raise MscclLimitError(f"{where}: {per_chan[(what, tb.chan)]} thread blocks with a {what} peer on "
                                          f"channel {tb.chan}, above the executor's limit of "
                                          f"{limits.max_tbs_per_channel} (--max-tbs-per-channel)")
        if not 0 <= tb.chan < nchannels:
            raise MscclFormatError(f"{where}: chan={tb.chan} is not one of the algorithm's {nchannels} channels")
        if len(tb.steps) > limits.max_steps:
            raise MscclLimitError(f"{where}: {len(tb.steps)} steps, above the executor's limit of {limits.max_steps} "
                                  f"steps per thread block (--max-steps; 64 in msccl-executor-nccl, 256 in RCCL)")
        pending = False
        for i, st in enumerate(tb.steps):
            w = _fmt(g.id, tb.id, st.s)
            if st.s != i:
                raise MscclFormatError(f"{w}: step numbered {st.s} at position {i}; steps are numbered 0, 1, 2, ...")
            if st.type not in STEP_TYPES:
                raise MscclFormatError(f"{w}: unknown step type {st.type!r} (known: {', '.join(STEP_TYPES)})")
            if st.hasdep not in (0, 1):
                raise MscclFormatError(f"{w}: hasdep={st.hasdep}, must be 0 or 1")
            if st.depid != -1:
                if st.depid == tb.id or st.depid not in nsteps:
                    raise MscclFormatError(f"{w}: depid={st.depid} is not another thread block of gpu {g.id}")
                if not 0 <= st.deps < nsteps[st.depid]:
                    raise MscclFormatError(f"{w}: deps={st.deps} is not a step of tb {st.depid} "
                                           f"(it has {nsteps[st.depid]})")
                awaited.setdefault((st.depid, st.deps), (tb.id, st.s))
            if st.type == "nop":
                pending = pending or st.depid != -1
                continue
            if pending and st.depid == -1:
                raise MscclFormatError(f"{w}: follows nops that carry dependencies but has none itself; the executor "
                                       f"attaches a nop's dependency to the next step, which must have one")
            pending = False
            _check_step(w, st, tb, sizes, true, limits)
        if pending:
            raise MscclFormatError(f"{_fmt(g.id, tb.id, len(tb.steps) - 1)}: ends with nops that carry dependencies "
                                   f"the executor would drop")
    steps = {tb.id: tb.steps for tb in g.tbs}
    for (t, s), (wt, ws) in sorted(awaited.items()):
        if not steps[t][s].hasdep:
            raise MscclFormatError(f"{_fmt(g.id, t, s)}: hasdep=0, but tb {wt} step {ws} waits for it "
                                   f"(the executor would wait forever)")


def _check_step(w: str, st, tb, sizes: dict, true: dict, limits: MscclLimits) -> None:
    if not 1 <= st.cnt <= limits.max_count:
        kind = MscclLimitError if st.cnt > limits.max_count else MscclFormatError
        raise kind(f"{w}: cnt={st.cnt}, must be 1..{limits.max_count} (the executor's MSCCL_MAX_COUNT is "
                   f"{limits.max_count + 1}; --max-count)")
    if st.type in SENDS and tb.send < 0:
        raise MscclFormatError(f"{w}: a {st.type} step in a thread block without a send peer")
    if st.type in RECVS and tb.recv < 0:
        raise MscclFormatError(f"{w}: a {st.type} step in a thread block without a receive peer")
    uses = []
    if st.type in ("s", "rrs", "rrc", "rrcs", "cpy", "re"):
        uses.append(("src", st.srcbuf, st.srcoff))
    if st.type in ("r", "rcs", "rrc", "rrcs", "cpy", "re"):
        uses.append(("dst", st.dstbuf, st.dstoff))
    for side, buf, off in uses:
        if buf not in BUFFERS:
            raise MscclFormatError(f"{w}: {side}buf={buf!r}, must be i, o or s")
        top = min(sizes[buf], true[buf])
        if off < 0 or off + st.cnt > top:
            raise MscclFormatError(f"{w}: {side}buf={buf} {side}off={off} cnt={st.cnt} reaches past the buffer's "
                                   f"{top} chunks")
        if off > limits.max_offset:
            raise MscclLimitError(f"{w}: {side}off={off}, above the executor's largest offset {limits.max_offset}")
