# Summarises a bench/run.sh CSV: per connection count, median [min-max] over the reps of each
# target, then Switchyard / nginx ratios and the issue target. Portable awk (mawk).
#
# Variables: mode (requests|stream), reps, conns_list, targets, cpu (the proxies' CPU),
# ttfb (optional file: "target p50_us" lines, stream mode).

function sortn(arr, n,    i, j, v) {
    for (i = 2; i <= n; i++) {
        v = arr[i]
        for (j = i - 1; j >= 1 && arr[j] > v; j--) arr[j + 1] = arr[j]
        arr[j + 1] = v
    }
}

# "median [min-max]" of V[1..n]; the median is left in MED.
function stat(n, fmt,    med) {
    MED = ""
    if (n == 0) return "-"
    sortn(V, n)
    med = (n % 2) ? V[(n + 1) / 2] : (V[n / 2] + V[n / 2 + 1]) / 2
    MED = med
    return sprintf(fmt " [" fmt "-" fmt "]", med, V[1], V[n])
}

# Fills V with column `col` of target t at c connections, one value per rep; returns the count.
function collect(c, t, col,    r, n, f) {
    n = 0
    for (r = 1; r <= reps; r++)
        if ((c, t, r) in row) {
            split(row[c, t, r], f, ",")
            if (f[col] != "") V[++n] = f[col] * scale
        }
    scale = 1
    return n
}

# Fills V with target p50 - direct p50 of the same rep.
function added(c, t,    r, n, a, d) {
    n = 0
    for (r = 1; r <= reps; r++)
        if ((c, t, r) in row && (c, "direct", r) in row) {
            split(row[c, t, r], a, ","); split(row[c, "direct", r], d, ",")
            V[++n] = a[P50] - d[P50]
        }
    return n
}

function clear(    k) { for (k in V) delete V[k] }

BEGIN {
    FS = ","
    scale = 1
    # CSV columns (see the header written by run.sh)
    RPS = 6; P50 = 8; P99 = 10; CPUREQ = 17; CPUPCT = 18; MOCKREQ = 19; RSSPEAK = 22; CPU0 = 24
    FRAMES = 32; LOST = 34; CPUFRAME = 36
    if (ttfb != "") {
        while ((getline line < ttfb) > 0) {
            split(line, f, " ")
            TT[f[1]] = f[2]; anytt = 1
        }
    }
}

NR > 1 { row[$2, $3, $1] = $0 }

END {
    nt = split(targets, T, " ")
    nc = split(conns_list, C, " ")
    for (ci = 1; ci <= nc; ci++) {
        c = C[ci]
        printf "-- %d connection%s: median [min-max] over %d reps\n", c, (c == 1 ? "" : "s"), reps
        if (mode == "stream") {
            printf "%-11s %-20s %-18s %-19s %-16s %-22s %-7s %-18s %-16s %-19s %-11s %s\n",
                "target", "streams/s", "p50 us (stream)", "p99 us", "added p50 us", "frames/s", "lost",
                "CPU-us/frame", "frames/CPU-ms", "CPU-us/stream", "proxy CPU%", "RSS peak MiB"
        } else {
            printf "%-19s %-22s %-16s %-19s %-16s %-19s %-13s %-17s %-11s %s\n", "target", "RPS",
                "p50 us", "p99 us", "added p50 us", "CPU-us/req", "proxy CPU%", "mock CPU-us/req",
                "CPU0 busy%", "RSS peak MiB"
        }
        for (ti = 1; ti <= nt; ti++) {
            t = T[ti]
            clear(); s_rps = stat(collect(c, t, RPS), "%.0f"); RPSM[c, t] = MED
            clear(); s_p50 = stat(collect(c, t, P50), "%.0f")
            clear(); s_p99 = stat(collect(c, t, P99), "%.0f")
            clear(); s_mock = stat(collect(c, t, MOCKREQ), "%.1f")
            clear(); s_c0 = stat(collect(c, t, CPU0), "%.0f")
            if (t == "direct") {
                s_add = "-"; s_cpu = "-"; s_pct = "-"; s_rss = "-"; s_frame = "-"; s_fpms = "-"
            } else {
                clear(); s_add = stat(added(c, t), "%.0f"); ADD[c, t] = MED
                clear(); s_cpu = stat(collect(c, t, CPUREQ), "%.1f"); CPU[c, t] = MED
                clear(); s_pct = stat(collect(c, t, CPUPCT), "%.0f")
                if (MED >= 95) { s_pct = s_pct "*"; SAT[c, t] = 1; anysat = 1 }
                clear(); scale = 1 / 1024; s_rss = stat(collect(c, t, RSSPEAK), "%.1f")
                clear(); s_frame = stat(collect(c, t, CPUFRAME), "%.1f"); FRAME[c, t] = MED
                clear(); n = collect(c, t, CPUFRAME)
                for (i = 1; i <= n; i++) V[i] = (V[i] > 0) ? 1000 / V[i] : 0
                s_fpms = stat(n, "%.1f")
            }
            if (mode == "stream") {
                # frames/s and frames lost summed over the reps
                clear(); n = collect(c, t, FRAMES); fr = 0; for (i = 1; i <= n; i++) fr += V[i]
                clear(); n = collect(c, t, LOST); lost = 0; for (i = 1; i <= n; i++) lost += V[i]
                TOTAL_LOST += lost
                clear(); n = collect(c, t, 4); secs = 0; for (i = 1; i <= n; i++) secs += V[i]
                if (t == "direct") s_cpu = "-"
                printf "%-11s %-20s %-18s %-19s %-16s %-22s %-7s %-18s %-16s %-19s %-11s %s\n",
                    t, s_rps, s_p50, s_p99, s_add, sprintf("%.0f", secs > 0 ? fr / secs : 0), lost,
                    s_frame, s_fpms, s_cpu, s_pct, s_rss
            } else {
                printf "%-19s %-22s %-16s %-19s %-16s %-19s %-13s %-17s %-11s %s\n", t, s_rps, s_p50,
                    s_p99, s_add, s_cpu, s_pct, s_mock, s_c0, s_rss
            }
        }
        print ""
    }
    if (anytt) {
        line = ""
        for (ti = 1; ti <= nt; ti++)
            if (T[ti] in TT) line = line sprintf("  %s %s us", T[ti], TT[T[ti]])
        printf "time to first byte (median over reps of the p50 of sequential curl requests on one kept-alive connection):\n %s\n\n", line
    }
    if (anysat)
        print "* proxy CPU >= 95%: the proxy is saturated; closed-loop p50 there is queueing behind it (compare throughput).\n"

    if (index(" " targets " ", " nginx ") == 0) exit
    met = 1; any = 0
    print "-- Switchyard / nginx (ratio of medians; per-rep paired ratios in brackets)"
    for (ci = 1; ci <= nc; ci++) {
        c = C[ci]
        for (ti = 1; ti <= nt; ti++) {
            t = T[ti]
            if (t !~ /^switchyard/) continue
            na = 0; ncpu = 0
            for (k in RA) delete RA[k]
            for (k in RC) delete RC[k]
            for (r = 1; r <= reps; r++) {
                if (!((c, t, r) in row && (c, "nginx", r) in row && (c, "direct", r) in row)) continue
                split(row[c, t, r], a, ","); split(row[c, "nginx", r], g, ","); split(row[c, "direct", r], d, ",")
                if (g[P50] - d[P50] > 0) RA[++na] = (a[P50] - d[P50]) / (g[P50] - d[P50])
                col = (mode == "stream") ? CPUFRAME : CPUREQ
                if (g[col] > 0) RC[++ncpu] = a[col] / g[col]
            }
            for (k in V) delete V[k]
            for (k = 1; k <= na; k++) V[k] = RA[k]
            sortn(V, na); ra_lo = V[1]; ra_hi = V[na]
            for (k in V) delete V[k]
            for (k = 1; k <= ncpu; k++) V[k] = RC[k]
            sortn(V, ncpu); rc_lo = V[1]; rc_hi = V[ncpu]
            ra = (ADD[c, "nginx"] > 0) ? ADD[c, t] / ADD[c, "nginx"] : -1
            if (mode == "stream") rc = (FRAME[c, "nginx"] > 0) ? FRAME[c, t] / FRAME[c, "nginx"] : -1
            else rc = (CPU[c, "nginx"] > 0) ? CPU[c, t] / CPU[c, "nginx"] : -1
            printf "c=%-3d %-19s added p50 %s [%s]   %s %s [%s]\n", c, t,
                (ra < 0 ? "n/a (nginx adds <= 0 us)" : sprintf("%.2fx", ra)),
                (na ? sprintf("%.2f-%.2f", ra_lo, ra_hi) : "-"),
                (mode == "stream" ? "CPU-us/frame" : "CPU-us/req"),
                (rc < 0 ? "n/a" : sprintf("%.2fx", rc)), (ncpu ? sprintf("%.2f-%.2f", rc_lo, rc_hi) : "-")
            if (SAT[c, t] && !SAT[c, "nginx"])
                printf "      (%s saturated CPU %s and nginx did not: throughput %.2fx nginx's)\n", t, cpu, RPSM[c, t] / RPSM[c, "nginx"]
            if (ci == nc && t in TT && "nginx" in TT && "direct" in TT && TT["nginx"] - TT["direct"] > 0)
                printf "      %-19s added time to first byte %.2fx nginx's (%d us vs %d us)\n", t,
                    (TT[t] - TT["direct"]) / (TT["nginx"] - TT["direct"]),
                    TT[t] - TT["direct"], TT["nginx"] - TT["direct"]
            if (t == "switchyard") {
                any = 1
                # nginx adding nothing (both queue behind CPU 0) leaves no ratio: then Switchyard
                # must add nothing either.
                lat_ok = (ra >= 0) ? (ra <= 1.5) : (ADD[c, t] <= 0)
                if (!lat_ok || rc < 0 || rc > 1.5) {
                    met = 0
                    miss = miss sprintf(" c=%d (latency %s, CPU %.2fx)", c,
                        (ra >= 0 ? sprintf("%.2fx", ra) : sprintf("+%d us where nginx adds <= 0", ADD[c, t])), rc)
                }
            }
        }
    }
    what = (mode == "stream") ? "added p50 and CPU-us/frame" : "added p50 and CPU-us/req"
    if (any) printf "target (switchyard, like-for-like: %s both <= 1.5x nginx at every connection count): %s%s\n",
        what, (met ? "MET" : "NOT MET:"), miss
    if (mode == "stream") printf "frames lost, all targets and reps: %d%s\n", TOTAL_LOST, (TOTAL_LOST ? "  <-- MUST BE 0" : "")
}
