# SPDX-License-Identifier: MIT
# The tables of bench/sessions.sh from its raw lines: "LABEL load=L
# MODE key=value ...", one per bench_sessions_http result.
function kv(   i, p) {
    delete f
    f["label"] = $1
    for (i = 2; i <= NF; i++) {
        p = index($i, "=")
        if (p > 0)
            f[substr($i, 1, p - 1)] = substr($i, p + 1)
        else
            f["mode"] = $i
    }
}
function lat(name) {
    return sprintf("%s / %s / %s (%s)", f[name "_p50_ms"], f[name "_p99_ms"],
                   f[name "_max_ms"], f[name "_n"])
}
function ratio(a, b) { return b > 0 ? sprintf("%.1f×", a / b) : "–" }
# The median of v[k, 1..n] (sorted in place of a copy).
function median(v, k, n,   a, i, j, t) {
    for (i = 1; i <= n; i++) a[i] = v[k, i] + 0
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n == 0 ? "" : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
}
# The median over the rounds of kind k's CPU over the session's, same N.
function cpu_ratio(k, s,   r, m, v) {
    m = 0
    for (r = 1; r <= nround; r++)
        if ((k, r) in rcpu && (s, r) in rcpu && rcpu[s, r] > 0)
            v[1, ++m] = rcpu[k, r] / rcpu[s, r]
    return m ? sprintf("%.1f×", median(v, 1, m)) : "–"
}
{
    kv()
    if (f["mode"] == "keep") {
        k = f["n"] SUBSEP f["kind"]
        r = f["round"] == "" ? 1 : f["round"]
        nk[k]++
        kcpu[k, nk[k]] = f["server_cpu_pct"]
        kren[k, nk[k]] = f["renews_per_s"]
        kreq[k, nk[k]] = f["requests_per_s"]
        kcli[k, nk[k]] = f["client_cpu_pct"]
        klost[k] = klost[k] (klost[k] == "" ? "" : ", ") f["lost"] "+" f["lost_fill"] " of " f["attached"]
        kload[k] = kload[k] (kload[k] == "" ? "" : ", ") f["load"]
        rcpu[k, r] = f["server_cpu_pct"]
        if (r > nround) nround = r
        if (!(f["n"] in seen)) { seen[f["n"]] = 1; ns[++nn] = f["n"] }
    }
    if ($3 == "claims" && $4 == "median") {
        claims[++nc] = sprintf("| %s | %s | %s | %s | %s | %s |", f["label"],
            f["how"], f["wall_ms"], f["server_cpu_ms"], f["db_cpu_ms"], f["load"])
    }
    if ($3 == "claims" && $4 == "ratio")
        claims[++nc] = sprintf("| %s | server + database CPU, per-round median: one by one / batch %s, at once / batch %s | | | | |",
            f["label"], f["cpu_one_by_one_over_batch"], f["cpu_at_once_over_batch"])
    if (f["mode"] == "attach") {
        att[++na] = sprintf("| %s | %s | %s | %s | %s | %s | %s |", f["label"] " (" f["target"] ")",
            f["leases"], f["attach_p50_ms"] " / " f["attach_p99_ms"] " (" f["attach_n"] ")",
            f["attach_cpu_us"], f["detach_cpu_us"],
            f["side"] == "large" ? ratio(f["attach_cpu_us"], small_cpu) : "", f["load"])
        if (f["side"] == "small") small_cpu = f["attach_cpu_us"]
    }
    if ($3 == "expiry" && $4 ~ /^round=/)
        settle[f["label"] SUBSEP f["how"]] = settle[f["label"] SUBSEP f["how"]] \
            (settle[f["label"] SUBSEP f["how"]] == "" ? "" : ", ") f["settle_ms"] " ms, CPU " f["server_cpu_ms"] "+" f["db_cpu_ms"] " ms"
    if ($3 == "expiry" && $4 ~ /^how=/)
        ex[++ne] = sprintf("| %s | %s | %s | %s | %s | %s | %s |", f["label"], f["how"],
            settle[f["label"] SUBSEP f["how"]], lat("before"), lat("during"), lat("after"), f["load"])
    if (f["label"] == "restart-fill")
        rst[++nr] = sprintf("| fill: %s sessions, %s leases | %s s, server CPU %s s | load %s |",
            f["sessions"], f["leases"], f["wall_s"], f["server_cpu_s"], f["load"])
    if (f["label"] == "restart-mem")
        rst[++nr] = sprintf("| RSS with %s leases | %s kB (empty %s kB, peak %s kB): %s B per lease | load %s |",
            f["leases"], f["rss_kib"], f["rss_before_kib"], f["hwm_kib"], f["per_lease_b"], f["load"])
    if (f["label"] == "restart-ready")
        rst[++nr] = sprintf("| restart %s (kill -9): to /readyz 200 | %s ms wall, %s ms CPU, RSS %s kB | load %s |",
            f["run"], f["ready_ms"], f["cpu_ms"], f["rss_kib"], f["load"])
    if (f["label"] == "restart-verify")
        rst[++nr] = sprintf("| after it: sessions listed live / with all leases / renewed / a lease read live | %s / %s / %s / %s of %s (%s leases; expires_in_ms %s–%s) | load %s |",
            f["listed"], f["with_all_leases"], f["renewed"], f["lease_read_live"], f["sessions"],
            f["leases"], f["expires_in_ms_min"], f["expires_in_ms_max"], f["load"])
}
END {
    if (nn) {
        print "Keeping N leases alive: medians of the rounds (server and client CPU in % of one core over the window; lost in the window + lost while granting, of those granted, each round; CPU / session: median of each round's ratio against the session at the same N):"
        print ""
        print "| N | how | lost, each round | renews/s | requests/s | server CPU % | client CPU % | CPU / session | load, each round |"
        print "|---|---|---|---|---|---|---|---|---|"
        split("leases session etcd-one etcd-many", kinds, " ")
        for (i = 1; i <= nn; i++)
            for (j = 1; j <= 4; j++) {
                k = ns[i] SUBSEP kinds[j]
                if (!(k in nk)) continue
                printf "| %s | %s | %s | %.0f | %.0f | %.2f | %.1f | %s | %s |\n", ns[i], kinds[j],
                    klost[k], median(kren, k, nk[k]), median(kreq, k, nk[k]),
                    median(kcpu, k, nk[k]), median(kcli, k, nk[k]),
                    cpu_ratio(k, ns[i] SUBSEP "session"), kload[k]
            }
        print ""
    }
    if (nc) {
        print "A claim of 1,000 names against 1,000 single acquires (medians):"
        print ""
        print "| store | how | wall ms | server CPU ms | database CPU ms | load |"
        print "|---|---|---|---|---|---|"
        for (i = 1; i <= nc; i++) print claims[i]
        print ""
    }
    if (na) {
        print "Attaching under a small and a large group (latency ms p50 / p99 (n); CPU per operation, server + database):"
        print ""
        print "| run | leases already in it | attach ms | CPU µs / attach | CPU µs / detach | large / small | load |"
        print "|---|---|---|---|---|---|---|"
        for (i = 1; i <= na; i++) print att[i]
        print ""
    }
    if (ne) {
        print "An unrelated client's acquires while a session's leases are settled (ms: p50 / p99 / max (n), pooled over the rounds):"
        print ""
        print "| run | end | settled after (each round) | before | during | after | load |"
        print "|---|---|---|---|---|---|---|"
        for (i = 1; i <= ne; i++) print ex[i]
        print ""
    }
    if (nr) {
        print "1,000,000 leases in 1,000 sessions:"
        print ""
        print "| what | figure | load |"
        print "|---|---|---|"
        for (i = 1; i <= nr; i++) print rst[i]
        print ""
    }
}
