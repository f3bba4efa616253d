#!/usr/bin/env python3
"""Summarizes several outputs of bench/run.sh (same tree, same machine):
the target metrics of docs/BENCHMARKS.md computed in each run (ratios
within one run, where the machine's speed at that moment cancels), then
their median, min and max over the runs.  With --cells, every table cell's
median, min and max instead.

    python3 bench/summarize.py run1.txt run2.txt ...
    python3 bench/summarize.py --cells run1.txt run2.txt ...
"""
import re
import statistics
import sys


def tables(path):
    """{title: {(impl, threads): value}} of one output."""
    t = {}
    title, kind = None, None
    for line in open(path):
        line = line.rstrip('\n')
        m = re.match(r'^== (.*) ==$', line)
        if m:
            title, kind = m.group(1), None
            t[title] = {}
            continue
        if title is None:
            continue
        if not line.strip():
            title = None
            continue
        if line.startswith('impl') or line.startswith('what'):
            kind = 'impl' if line.startswith('impl') else 'what'
            continue
        if kind is None or line.startswith('####'):
            continue
        pat = (r'^(.*?)\s+(\d+)\s+\d+\s+(-?[\d.]+)' if kind == 'impl'
               else r'^(.*?)\s+(\d+)\s+(-?[\d.]+)$')
        mm = re.match(pat, line)
        if mm:
            t[title][(mm.group(1).strip(), int(mm.group(2)))] = float(mm.group(3))
    return t


def find(t, prefix):
    for k in t:
        if k.startswith(prefix):
            return t[k]
    return None


def cells(paths):
    order, data = [], {}
    for f in paths:
        t = tables(f)
        for title, rows in t.items():
            for (name, th), v in rows.items():
                key = (title, name, th)
                if key not in data:
                    data[key] = []
                    order.append(key)
                data[key].append(v)
    cur = None
    for key in order:
        title, name, th = key
        if title != cur:
            print(f'\n{title}\n\n| impl | threads | median | min | max | runs |\n|---|---|---|---|---|---|')
            cur = title
        v = data[key]
        print(f'| {name} | {th} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} | {len(v)} |')


def targets(paths):
    metrics = {}
    def put(k, v):
        metrics.setdefault(k, []).append(v)

    for f in paths:
        t = tables(f)
        for n in (30, 35):
            tb = find(t, f'fib({n})')
            if not tb:   # a run of a subset (BENCH_ONLY)
                continue
            for impl, label in (('weft typed tasks', 'typed'), ('weft_spawn + group', 'weft_spawn')):
                put(f'fib({n}) {label}, 1 worker / serial -O2', tb[(impl, 1)] / tb[('serial', 1)])
                if (impl, 2) in tb:
                    put(f'fib({n}) {label}, speedup 2 vs 1 workers', tb[(impl, 1)] / tb[(impl, 2)])
            for impl in ('model: head passed', 'model: head in TLS', 'serial, 2 calls/node'):
                put(f'fib({n}) {impl} / serial -O2', tb[(impl, 1)] / tb[('serial', 1)])
            copies = 'serial, a copy per thread'
            if (copies, 2) in tb:
                put(f'fib({n}) the machine: serial copies, speedup 2 vs 1 threads',
                    tb[(copies, 1)] / tb[(copies, 2)])
        for kind, pre in (('flat', 'empty tasks: 1e6'), ('tree', 'empty tasks: binary')):
            tb = find(t, pre)
            if not tb:
                continue
            for impl in ('weft typed tasks', 'weft_spawn + group'):
                for w in (1, 2):
                    if (impl, w) in tb:
                        put(f'empty tasks {kind}, {impl}, {w} worker(s), ns/task', tb[(impl, w)])
        for name in ('queens', 'uts', 'cilksort', 'matmul:'):
            tb = find(t, name)
            if not tb or ('weft typed tasks', 1) not in tb:
                continue
            label = name.rstrip(':')
            put(f'{label} 1 worker / serial -O2', tb[('weft typed tasks', 1)] / tb[('serial', 1)])
            if ('weft typed tasks', 2) in tb:
                put(f'{label} speedup 2 vs 1 workers', tb[('weft typed tasks', 1)] / tb[('weft typed tasks', 2)])
        for pre, label in (('balanced map, n = 1000,', 'balanced 1e3'), ('balanced map, n = 1000000,', 'balanced 1e6'),
                           ('balanced map, n = 10000000,', 'balanced 1e7'), ('unbalanced map, n = 1e5, cost of i = (100', 'unbalanced linear'),
                           ('unbalanced map, n = 1e5, cost of i = random', 'unbalanced random')):
            tb = find(t, pre)
            if not tb:
                continue
            best2 = min(v for (nm, th), v in tb.items() if th == 2 and not nm.startswith('weft') and nm != 'serial')
            for nm in ('weft for, in worker', 'weft map, in worker',
                       'weft for, outside->worker', 'weft map, outside->worker'):
                if (nm, 2) in tb:   # runs before 2026-11-29 21:30 have no outside->worker rows
                    put(f'{label}: {nm}, 2 workers / best 2-thread contender', tb[(nm, 2)] / best2)
            for nm in ('weft for, from main+1', 'weft map, from main+1'):
                put(f'{label}: {nm}, 1 worker (2 threads) / best 2-thread contender', tb[(nm, 1)] / best2)
                put(f'{label}: {nm}, 2 workers (3 threads) / best 2-thread contender', tb[(nm, 2)] / best2)
        tb = find(t, 'idle: process CPU')
        if tb:   # absent from runs of a subset (BENCH_ONLY)
            put('idle 2 workers just created, ms CPU/s', tb[('weft, just created', 2)])
            put('idle 2 workers right after a parallel_for, ms CPU/s', tb[('weft, right after a parallel_for', 2)])
        tb = find(t, 'idle after')
        if tb:
            for nm in ('weft parallel_map', 'openmp dynamic,1', 'tbb simple_partitioner'):
                put(f'idle after a blocking burst on 64 threads, {nm}, ms CPU/s', tb[(nm, 64)])
        tb = find(t, 'runtime create')
        if tb:
            put('create + destroy 2 workers, us', tb[('weft create + destroy', 2)])
            put('pthread create + join 2, us', tb[('pthread create + join (floor)', 2)])
        tb = find(t, '(b) fused')
        if tb:
            put('(b) 1 worker in worker / C -O2 loop time', tb[('weft call, in worker', 1)] / tb[('serial', 1)])
            put('(b) 1 worker in worker / C -O3 loop time', tb[('weft call, in worker', 1)] / tb[('serial -O3 (vectorized)', 1)])
            put('(b) speedup 2 vs 1 workers (in worker)', tb[('weft call, in worker', 1)] / tb[('weft call, in worker', 2)])
            put('(b) openmp speedup 2 vs 1', tb[('openmp static simd', 1)] / tb[('openmp static simd', 2)])
        tb = find(t, '(c)')
        if tb:
            put('(c) ns per matmul op, 1 worker', tb[('weft concrete_call', 1)])
            put('(c) ns per matmul op, 2 workers', tb[('weft concrete_call', 2)])

    print('| metric | median | min | max | runs |\n|---|---|---|---|---|')
    for k, v in metrics.items():
        print(f'| {k} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} | {len(v)} |')


if __name__ == '__main__':
    args = sys.argv[1:]
    if args and args[0] == '--cells':
        cells(args[1:])
    elif args:
        targets(args)
    else:
        sys.exit(__doc__)
