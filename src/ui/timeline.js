// SPDX-License-Identifier: MIT
// The grant timeline, drawn as SVG: one lane per name (resource), each
// grant a bar from its start to its end with its token on it, the end
// marked by its cause, and sink decisions as marks on the same axis.  Used
// by the console's name page and by the page tenure-check --html writes.
// Data in, SVG out: it fetches nothing and keeps no state.
'use strict';

(function (global) {
    const NS = 'http://www.w3.org/2000/svg';
    const W = 1000;       // viewBox width
    const LEFT = 150;     // room for the lane labels
    const RIGHT = 20;
    const ROW_H = 22;     // one row of bars; overlapping grants stack
    const MARKS_H = 18;   // the sink's marks under the bars
    const AXIS_H = 28;

    function el(name, attrs, text) {
        const e = document.createElementNS(NS, name);
        for (const k in attrs) {
            if (attrs[k] !== undefined && attrs[k] !== null)
                e.setAttribute(k, String(attrs[k]));
        }
        if (text !== undefined)
            e.textContent = text;
        return e;
    }

    function tip(node, text) {
        node.appendChild(el('title', {}, text));
        return node;
    }

    // A round step for axis ticks: about six over the span.
    function step(span) {
        const raw = span / 6;
        const mag = Math.pow(10, Math.floor(Math.log10(raw)));
        for (const m of [1, 2, 5, 10]) {
            if (raw <= m * mag)
                return m * mag;
        }
        return 10 * mag;
    }

    function axis(svg, x, t0, t1, unit, label) {
        const g = el('g', {class: 'axis'});
        g.appendChild(el('line', {x1: LEFT, x2: W - RIGHT, y1: AXIS_H - 8,
                                  y2: AXIS_H - 8}));
        const s = step(t1 - t0);
        for (let t = Math.ceil(t0 / s) * s; t <= t1; t += s) {
            g.appendChild(el('line', {x1: x(t), x2: x(t), y1: AXIS_H - 12,
                                      y2: AXIS_H - 4}));
            g.appendChild(el('text', {x: x(t), y: AXIS_H - 14,
                                      'text-anchor': 'middle'},
                             label ? label(t) : String(t) + unit));
        }
        svg.appendChild(g);
    }

    function endMark(g, x, y, kind) {
        const cls = 'end end-' + kind;
        if (kind === 'released')
            g.appendChild(el('rect', {class: cls, x: x - 4, y: y - 4,
                                      width: 8, height: 8}));
        else if (kind === 'revoked')
            g.appendChild(el('path', {class: cls,
                                      d: `M${x - 5},${y - 6}L${x + 5},${y}L${x - 5},${y + 6}Z`}));
        else if (kind === 'expired')
            g.appendChild(el('path', {class: cls,
                                      d: `M${x - 4},${y - 4}L${x + 4},${y + 4}M${x - 4},${y + 4}L${x + 4},${y - 4}`}));
    }

    // Rows for the bars of a lane: each bar goes to the first row free at
    // its start, so grants that overlap in time are drawn one above the
    // other instead of on top of each other.
    function stack(bars) {
        const ends = [];
        for (const b of bars.slice().sort((p, q) => p.start - q.start)) {
            let r = ends.findIndex((e) => e <= b.start);
            if (r < 0) {
                r = ends.length;
                ends.push(0);
            }
            ends[r] = b.end;
            b.row = r;
        }
        return Math.max(1, ends.length);
    }

    function bar(g, x, laneTop, b) {
        const top = laneTop + b.row * ROW_H - 8;
        const x0 = x(b.start);
        const x1 = Math.max(x(b.end), x0 + 2);
        const kind = b.endKind || 'live';
        const grp = el('g', {class: 'grant' + (b.bad ? ' violating' : ''),
                             'data-token': b.token, 'data-end': kind});
        grp.appendChild(el('rect', {class: 'bar bar-' + kind, x: x0,
                                    y: top + 10, width: x1 - x0, height: 18,
                                    rx: 3}));
        if (x1 - x0 > 30)
            grp.appendChild(el('text', {class: 'bar-label', x: x0 + 4,
                                        y: top + 23},
                               '#' + b.token + (x1 - x0 > 110 && b.owner ?
                                                ' ' + b.owner : '')));
        endMark(grp, x1, top + 19, kind);
        tip(grp, `token ${b.token}` + (b.owner ? `, ${b.owner}` : '') +
                 `, ${kind}` + (b.note ? `\n${b.note}` : ''));
        g.appendChild(grp);
    }

    function mark(g, x, top, m) {
        const cx = x(m.t);
        const cy = top + 9;
        const grp = el('g', {class: 'mark mark-' + m.decision +
                                    (m.bad ? ' violating' : ''),
                             'data-decision': m.decision,
                             'data-token': m.token,
                             'data-line': m.line});
        if (m.decision === 'admit')
            grp.appendChild(el('circle', {cx: cx, cy: cy, r: 4}));
        else
            grp.appendChild(el('path', {d: `M${cx - 4},${cy - 4}L${cx + 4},${cy + 4}M${cx - 4},${cy + 4}L${cx + 4},${cy - 4}`}));
        tip(grp, `sink ${m.decision} token ${m.token}` +
                 (m.note ? `\n${m.note}` : ''));
        g.appendChild(grp);
    }

    // data: {t0, t1, unit, label(t) optional, lanes: [{name, bars: [{start,
    // end, token, owner, endKind, bad, note}], marks: [{t, token, decision,
    // line, bad, note}]}]}.  Replaces the children of parent with the SVG.
    function render(parent, data) {
        const t0 = data.t0;
        const t1 = data.t1 > data.t0 ? data.t1 : data.t0 + 1;
        const lanes = data.lanes;
        const rows = lanes.map((lane) => stack(lane.bars));
        const heights = rows.map((r) => r * ROW_H + MARKS_H + 8);
        const h = AXIS_H + heights.reduce((a, b) => a + b, 0) + 6;
        const svg = el('svg', {viewBox: `0 0 ${W} ${h}`, class: 'timeline-svg',
                               role: 'img', 'aria-label': 'grant timeline'});
        const x = (t) => LEFT + (t - t0) / (t1 - t0) * (W - LEFT - RIGHT);
        axis(svg, x, t0, t1, data.unit || '', data.label);
        let top = AXIS_H;
        lanes.forEach((lane, i) => {
            const g = el('g', {class: 'lane', 'data-lane': lane.name});
            g.appendChild(el('line', {class: 'lane-rule', x1: 0, x2: W,
                                      y1: top + heights[i] - 2,
                                      y2: top + heights[i] - 2}));
            g.appendChild(tip(el('text', {class: 'lane-label', x: 4,
                                          y: top + 15},
                                 lane.name.length > 22 ?
                                 lane.name.slice(0, 21) + '…' : lane.name),
                              lane.name));
            for (const b of lane.bars)
                bar(g, x, top, b);
            for (const m of lane.marks || [])
                mark(g, x, top + rows[i] * ROW_H + 4, m);
            svg.appendChild(g);
            top += heights[i];
        });
        parent.replaceChildren(svg);
        return svg;
    }

    global.TenureTimeline = {render: render};
})(window);
