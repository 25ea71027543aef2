// SPDX-License-Identifier: MIT
// The page tenure-check --html writes: the verdict, every violation with
// the rule it breaks and the events involved, and the history as a
// timeline, one lane per resource.  Grants are bars from the acquire's
// answer to their end (the release's answer, or the last TTL counted from
// the acquire or renew request that was sent last; a grant under a
// session ends with its session: its end's answer, or the last TTL
// counted from its open or renew); sink decisions are marks on the same
// axis.  Events that take part in a violation are drawn
// in red.  The data is in the page itself (script#tenure-history).
'use strict';

(function () {
    const data = JSON.parse(document.getElementById('tenure-history').textContent);
    const report = data.report;
    const NS_PER_MS = 1e6;

    // Lines (1-based, as the file has them) that take part in a violation.
    const badLines = new Set();
    for (const v of report.violations)
        for (const e of v.events)
            badLines.add(e.line);

    const ms = (t) => t / NS_PER_MS;

    // Each session's end as the bars of its leases show it: the TTL from
    // its open or its last ok renew, or its end's answer.
    function sessions(ops) {
        const ends = new Map(); // session id -> {end, endKind}
        for (const op of ops) {
            if (op.outcome !== 'ok' || op.session === undefined)
                continue;
            const s = ends.get(op.session);
            if (op.op === 'session_open' && !s)
                ends.set(op.session, {end: ms(op.invoke_t) + op.ttl_ms,
                                      endKind: 'expired'});
            else if (op.op === 'session_renew' && s && s.endKind === 'expired')
                s.end = Math.max(s.end, ms(op.invoke_t) + (op.ttl_ms || 0));
            else if (op.op === 'session_end' && s) {
                s.end = Math.min(s.end, ms(op.complete_t));
                s.endKind = 'released';
            }
        }
        return ends;
    }

    function grants(ops) {
        const byKey = new Map(); // name + token -> bar
        const lanes = new Map();
        const ends = sessions(ops);
        const lane = (name) => {
            if (!lanes.has(name))
                lanes.set(name, {name: name, bars: [], marks: []});
            return lanes.get(name);
        };
        for (const op of ops) {
            if (op.name === undefined)
                continue; // a session operation: no lane of its own
            lane(op.name);
            if (op.op !== 'acquire' || op.outcome !== 'ok' || op.token_returned === undefined)
                continue;
            const s = op.session !== undefined ? ends.get(op.session) : undefined;
            const bar = {start: ms(op.complete_t), token: op.token_returned,
                         owner: op.proc, endKind: s ? s.endKind : 'expired',
                         end: s ? s.end : op.session !== undefined ?
                             ms(op.complete_t) : ms(op.invoke_t) + op.ttl_ms,
                         bad: badLines.has(op.line),
                         note: `acquire, line ${op.line}` +
                             (op.session !== undefined ? `, session ${op.session}` : '')};
            byKey.set(op.name + "\u0000" + op.token_returned, bar);
            lane(op.name).bars.push(bar);
        }
        for (const op of ops) {
            if (op.op !== 'renew' && op.op !== 'release')
                continue;
            const bar = byKey.get(op.name + '\u0000' + op.token);
            if (!bar)
                continue;
            if (badLines.has(op.line))
                bar.bad = true;
            if (op.outcome !== 'ok')
                continue;
            if (op.op === 'renew' && bar.endKind !== 'released')
                bar.end = Math.max(bar.end, ms(op.invoke_t) + op.ttl_ms);
            if (op.op === 'release') {
                bar.end = ms(op.complete_t);
                bar.endKind = 'released';
            }
        }
        return lanes;
    }

    function build() {
        const lanes = grants(data.ops);
        for (const s of data.sinks) {
            if (!lanes.has(s.resource))
                lanes.set(s.resource, {name: s.resource, bars: [], marks: []});
            lanes.get(s.resource).marks.push({
                t: ms(s.t), token: s.token, decision: s.decision,
                line: s.line, bad: badLines.has(s.line),
                note: `line ${s.line}` + (s.hwm_before !== undefined ?
                                          `, mark before ${s.hwm_before}` : ''),
            });
        }
        let t0 = Infinity;
        let t1 = -Infinity;
        for (const l of lanes.values()) {
            for (const b of l.bars) {
                t0 = Math.min(t0, b.start);
                t1 = Math.max(t1, b.end);
            }
            for (const m of l.marks) {
                t0 = Math.min(t0, m.t);
                t1 = Math.max(t1, m.t);
            }
        }
        if (t0 === Infinity) {
            t0 = 0;
            t1 = 1;
        }
        const names = Array.from(lanes.keys()).sort();
        return {t0: t0, t1: t1 + (t1 - t0) * 0.02, unit: ' ms',
                lanes: names.map((n) => lanes.get(n))};
    }

    function text(tag, t, cls) {
        const e = document.createElement(tag);
        e.textContent = t;
        if (cls)
            e.className = cls;
        return e;
    }

    function violations() {
        const list = document.getElementById('violations');
        for (const v of report.violations) {
            const li = document.createElement('li');
            li.className = 'violation';
            li.dataset.violation = v.class;
            li.append(text('h3', `${v.class} (${v.count})`),
                      text('p', v.why, 'why'));
            const ol = document.createElement('ol');
            for (const e of v.events)
                ol.appendChild(text('li', `line ${e.line}: ` + JSON.stringify(e)));
            li.appendChild(ol);
            list.appendChild(li);
        }
    }

    const verdict = document.getElementById('verdict');
    verdict.dataset.valid = String(report.valid);
    verdict.textContent = report.valid ?
        `No violation in ${report.events} events.` :
        `${report.violations.length} kind(s) of violation in ${report.events} events.`;
    violations();
    TenureTimeline.render(document.getElementById('timeline'), build());
})();
