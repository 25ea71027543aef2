// SPDX-License-Identifier: MIT
// The operator console: live leases kept current by the event stream (the
// list is read once, then every change comes from /v1/events), the event
// feed, a name's timeline and force release.  It talks only to the public
// API of the server that served it.  The bearer token, when the server has
// authentication on, is kept in sessionStorage (this tab only) and sent as
// an Authorization header; never in a URL, never in a cookie.  Every value
// from the server is put into the page as text, never as markup.
'use strict';

(function () {
    const $ = (sel) => document.querySelector(sel);
    const TOKEN_KEY = 'tenure.bearer';
    const FEED_MAX = 300;
    const LIST_PAGES_MAX = 20;

    const state = {
        bearer: sessionStorage.getItem(TOKEN_KEY),
        leases: new Map(),   // name -> {name, owner, token, floor, until, lockDelay}
        prefix: '',
        sort: 'name',
        paused: false,
        held: [],            // feed entries that came while paused
        lastId: null,        // Last-Event-ID to resume from
        stream: null,        // AbortController of the open stream
        grants: null,        // {n, at} of the last metrics read
        confirming: null,    // name whose force release awaits confirmation
    };

    // ---- talking to the API ------------------------------------------

    function headers(extra) {
        const h = Object.assign({}, extra || {});
        if (state.bearer)
            h['Authorization'] = 'Bearer ' + state.bearer;
        return h;
    }

    async function api(method, path, body) {
        const opt = {method: method, cache: 'no-store',
                     headers: headers(body ? {'Content-Type': 'application/json'} : {})};
        if (body)
            opt.body = JSON.stringify(body);
        const r = await fetch(path, opt);
        const text = await r.text();
        let data = null;
        if (text) {
            try {
                data = JSON.parse(text);
            } catch (e) {
                data = text;
            }
        }
        if (r.status === 401)
            needLogin('the server refused the token');
        return {status: r.status, data: data};
    }

    const enc = (name) => encodeURIComponent(name);
    const message = (r) => (r.data && r.data.message) ? r.data.message :
                           `HTTP ${r.status}`;

    // ---- sign-in -----------------------------------------------------

    function needLogin(why) {
        if (state.stream)
            state.stream.abort();
        state.stream = null;
        if (state.bearer) {
            sessionStorage.removeItem(TOKEN_KEY);
            state.bearer = null;
            $('#login-error').textContent = why;
        }
        $('#app').hidden = true;
        $('#logout').hidden = true;
        $('#login').hidden = false;
        $('#login-token').focus();
    }

    async function start() {
        const r = await api('GET', '/v1/leases?limit=1');
        if (r.status === 401)
            return;
        $('#login').hidden = true;
        $('#app').hidden = false;
        $('#logout').hidden = !state.bearer;
        await reload();
        follow();
        route();
        stats();
    }

    $('#login-form').addEventListener('submit', (ev) => {
        ev.preventDefault();
        const t = $('#login-token').value.trim();
        if (!t)
            return;
        state.bearer = t;
        sessionStorage.setItem(TOKEN_KEY, t);
        $('#login-token').value = '';
        $('#login-error').textContent = '';
        start();
    });

    $('#logout').addEventListener('click', () => {
        sessionStorage.removeItem(TOKEN_KEY);
        state.bearer = null;
        location.reload();
    });

    function notice(text, kind) {
        const n = $('#notice');
        n.textContent = text;
        n.dataset.state = kind;
        n.hidden = false;
    }

    // ---- the lease table ---------------------------------------------

    function put(l, now) {
        state.leases.set(l.name, {
            name: l.name, owner: l.owner_id, token: l.token,
            floor: l.floor !== undefined ? l.floor : l.token,
            until: l.expires_in_ms !== undefined ? now + l.expires_in_ms : null,
            lockDelay: l.lock_delay_ms, checked: now,
        });
    }

    // Read the whole list once (following "next"); events keep it current.
    async function reload() {
        const fresh = new Map();
        let after = null;
        for (let page = 0; page < LIST_PAGES_MAX; page++) {
            let q = `/v1/leases?limit=1000&prefix=${enc(state.prefix)}`;
            if (after !== null)
                q += `&after=${enc(after)}`;
            const now = performance.now();
            const r = await api('GET', q);
            if (r.status !== 200) {
                notice(`cannot list leases: ${message(r)}`, 'error');
                return;
            }
            for (const l of r.data.leases) {
                put(l, now);
                fresh.set(l.name, state.leases.get(l.name));
            }
            after = r.data.next;
            if (after === null)
                break;
        }
        state.leases = fresh;
        render();
    }

    // One lease again: after an acquire event (for its time left) and when
    // its countdown ran out without an event (it was renewed, or is ending).
    async function refresh(name) {
        const now = performance.now();
        const known = state.leases.get(name);
        if (known)
            known.checked = now;
        const r = await api('GET', `/v1/leases/${enc(name)}`);
        if (r.status === 200) {
            const floor = known ? Math.max(known.floor, r.data.token) :
                                  r.data.token;
            put(r.data, now);
            state.leases.get(name).floor = floor;
        } else if (r.status === 404) {
            state.leases.delete(name);
        }
        render();
    }

    function left(l, now) {
        return l.until === null ? null : Math.max(0, l.until - now);
    }

    function fmtMs(ms) {
        if (ms === null || ms === undefined)
            return '…';
        if (ms < 10000)
            return (ms / 1000).toFixed(1) + ' s';
        if (ms < 120000)
            return Math.round(ms / 1000) + ' s';
        return Math.round(ms / 60000) + ' min';
    }

    function cell(tr, text, cls) {
        const td = document.createElement('td');
        td.textContent = text;
        if (cls)
            td.className = cls;
        tr.appendChild(td);
        return td;
    }

    function actions(td, name) {
        if (state.confirming === name) {
            const yes = button('confirm force release', 'confirm', () =>
                forceRelease(name));
            yes.className = 'danger';
            td.append(yes, button('cancel', 'cancel', () => {
                state.confirming = null;
                render();
            }));
        } else {
            td.append(button('force release…', 'force', () => {
                state.confirming = name;
                render();
            }));
        }
    }

    function button(text, action, fn) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = text;
        b.dataset.action = action;
        b.addEventListener('click', fn);
        return b;
    }

    function row(l, now) {
        const tr = document.createElement('tr');
        tr.dataset.lease = l.name;
        tr.dataset.token = String(l.token);
        const a = document.createElement('a');
        a.href = '#/lease/' + enc(l.name);
        a.textContent = l.name;
        cell(tr, '').appendChild(a);
        cell(tr, l.owner);
        cell(tr, String(l.token), 'num');
        cell(tr, String(l.floor), 'num');
        cell(tr, fmtMs(left(l, now)), 'num left');
        cell(tr, l.lockDelay ? fmtMs(l.lockDelay) : '–', 'num');
        actions(cell(tr, ''), l.name);
        return tr;
    }

    function sorted(now) {
        const all = Array.from(state.leases.values());
        if (state.sort === 'left')
            return all.sort((a, b) => (left(a, now) ?? Infinity) -
                                      (left(b, now) ?? Infinity) ||
                                      (a.name < b.name ? -1 : 1));
        return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    }

    function render() {
        const now = performance.now();
        const body = $('#leases tbody');
        body.replaceChildren(...sorted(now).map((l) => row(l, now)));
        $('#lease-count').textContent = `(${state.leases.size})`;
        $('#leases-empty').hidden = state.leases.size > 0;
        if (!$('#detail').hidden)
            holder();
    }

    // The countdown: time left is counted here from when the answer came;
    // a lease at zero with no event yet is read again (renewed, or ending).
    function tick() {
        const now = performance.now();
        for (const tr of document.querySelectorAll('#leases tbody tr')) {
            const l = state.leases.get(tr.dataset.lease);
            if (!l)
                continue;
            const ms = left(l, now);
            tr.querySelector('.left').textContent = fmtMs(ms);
            if (ms === 0 && now - l.checked > 1000)
                refresh(l.name);
        }
        if (state.sort === 'left')
            render();
    }

    async function forceRelease(name) {
        state.confirming = null;
        const r = await api('DELETE', `/v1/leases/${enc(name)}?force=true`);
        if (r.status === 204) {
            notice(`force release of "${name}": done`, 'done');
        } else if (r.status === 409 || r.status === 404) {
            notice(`force release of "${name}": no live lease`, 'done');
        } else {
            notice(`force release of "${name}" refused: ${message(r)}`,
                   'refused');
        }
        render();
    }

    $('#sort').addEventListener('change', (ev) => {
        state.sort = ev.target.value;
        render();
    });

    $('#prefix').addEventListener('change', async (ev) => {
        state.prefix = ev.target.value;
        state.lastId = null;
        if (state.stream)
            state.stream.abort();
        await reload();
        follow();
    });

    // ---- the event stream and the feed --------------------------------

    // session_opened and session_ended: workers joining and leaving; each
    // lease of an ended session gets its own event after it.
    function isSession(ev) {
        return ev.type === 'session_opened' || ev.type === 'session_ended';
    }

    function feedEntry(id, ev) {
        const li = document.createElement('li');
        li.dataset.eventId = String(id);
        li.dataset.type = ev.type;
        li.className = 'ev-' + ev.type;
        const when = document.createElement('time');
        when.textContent = new Date().toLocaleTimeString();
        const type = document.createElement('b');
        type.textContent = ev.type;
        const what = document.createElement('span');
        if (ev.type === 'reset')
            what.textContent = ev.message || 're-reading state';
        else if (isSession(ev))
            what.textContent = `session ${ev.session_id} ` +
                `owner=${ev.owner_id}` +
                (ev.reason ? ` reason=${ev.reason}` : '');
        else
            what.textContent = `${ev.name} owner=${ev.owner_id} ` +
                `token=${ev.token} floor=${ev.floor}`;
        li.append(when, ' ', type, ' ', what);
        return li;
    }

    function showEntries(entries) {
        const feed = $('#feed');
        for (const li of entries)
            feed.prepend(li);
        while (feed.children.length > FEED_MAX)
            feed.lastChild.remove();
    }

    function apply(id, ev) {
        const li = feedEntry(id, ev);
        if (state.paused) {
            state.held.push(li);
            $('#paused-count').textContent = `${state.held.length} waiting`;
        } else {
            showEntries([li]);
        }
        if (ev.type === 'reset') {
            reload();
            return;
        }
        if (isSession(ev) || typeof ev.name !== 'string')
            return; // in the feed only: the table lists leases
        if (ev.type === 'acquired') {
            state.leases.set(ev.name, {name: ev.name, owner: ev.owner_id,
                                       token: ev.token, floor: ev.floor,
                                       until: null, checked: 0});
            refresh(ev.name);
        } else {
            const l = state.leases.get(ev.name);
            if (l && l.token <= ev.token)
                state.leases.delete(ev.name);
        }
        render();
        if (!$('#detail').hidden && ev.name === currentName())
            timeline();
    }

    $('#pause').addEventListener('click', () => {
        state.paused = !state.paused;
        $('#pause').textContent = state.paused ? 'resume' : 'pause';
        $('#pause').setAttribute('aria-pressed', String(state.paused));
        if (!state.paused) {
            showEntries(state.held);
            state.held = [];
            $('#paused-count').textContent = '';
        }
    });

    function streamState(up) {
        const s = $('#stat-stream');
        s.dataset.stream = up ? 'up' : 'down';
        s.textContent = up ? 'following' : 'reconnecting';
    }

    // One server-sent event block: "id:" and "data:" lines.
    function block(text) {
        let id = null;
        let data = '';
        for (const line of text.split('\n')) {
            if (line.startsWith('id:'))
                id = line.slice(3).trim();
            else if (line.startsWith('data:'))
                data += line.slice(5).trim();
        }
        if (id !== null)
            state.lastId = id;
        if (data)
            apply(id, JSON.parse(data));
    }

    // EventSource cannot send an Authorization header, so the stream is
    // read with fetch.  A cut stream is resumed with Last-Event-ID; a
    // reset (events missed) makes the table be read again.
    async function follow() {
        if (state.stream)
            state.stream.abort();
        const ctl = new AbortController();
        state.stream = ctl;
        const h = state.lastId !== null ? {'Last-Event-ID': state.lastId} : {};
        try {
            const r = await fetch(`/v1/events?prefix=${enc(state.prefix)}`,
                                  {headers: headers(h), signal: ctl.signal,
                                   cache: 'no-store'});
            if (r.status === 401) {
                needLogin('the server refused the token');
                return;
            }
            if (r.status !== 200)
                throw new Error(`events: HTTP ${r.status}`);
            streamState(true);
            const reader = r.body.getReader();
            const dec = new TextDecoder();
            let buf = '';
            for (;;) {
                const {value, done} = await reader.read();
                if (done)
                    break;
                buf += dec.decode(value, {stream: true}).replace(/\r/g, '');
                let end;
                while ((end = buf.indexOf('\n\n')) >= 0) {
                    block(buf.slice(0, end));
                    buf = buf.slice(end + 2);
                }
            }
        } catch (e) {
            if (ctl.signal.aborted)
                return;
        }
        if (state.stream !== ctl)
            return;
        streamState(false);
        setTimeout(() => {
            if (state.stream === ctl)
                follow();
        }, 1000);
    }

    // ---- header figures ----------------------------------------------

    function metric(text, name) {
        const m = text.match(new RegExp('^' + name + ' ([0-9.e+]+)$', 'm'));
        return m ? Number(m[1]) : null;
    }

    async function stats() {
        if ($('#app').hidden)
            return;
        const ready = await fetch('/readyz', {cache: 'no-store'});
        const rd = $('#stat-ready');
        rd.dataset.ready = ready.ok ? 'ready' : 'not-ready';
        rd.textContent = ready.ok ? 'ready' : 'not ready';
        const r = await fetch('/metrics', {headers: headers(),
                                           cache: 'no-store'});
        if (!r.ok)
            return;
        const text = await r.text();
        const live = metric(text, 'tenure_leases_live');
        $('#stat-live').textContent = live === null ? '–' : String(live);
        const n = metric(text, 'tenure_grants_total');
        const at = performance.now();
        if (n !== null && state.grants !== null) {
            const rate = (n - state.grants.n) / ((at - state.grants.at) / 1000);
            $('#stat-grants').textContent = rate.toFixed(rate < 10 ? 1 : 0);
        }
        state.grants = n === null ? null : {n: n, at: at};
    }

    // ---- a name's page ----------------------------------------------

    function currentName() {
        const m = location.hash.match(/^#\/lease\/(.+)$/);
        return m ? decodeURIComponent(m[1]) : null;
    }

    function holder() {
        const name = currentName();
        const l = state.leases.get(name);
        const dl = $('#detail-holder');
        dl.replaceChildren();
        const add = (k, v) => {
            const dt = document.createElement('dt');
            dt.textContent = k;
            const dd = document.createElement('dd');
            dd.textContent = v;
            dl.append(dt, dd);
        };
        if (!l) {
            add('holder', 'none');
            $('#detail-actions').replaceChildren();
            return;
        }
        add('owner', l.owner);
        add('token', String(l.token));
        add('floor', String(l.floor));
        add('time left', fmtMs(left(l, performance.now())));
        const box = $('#detail-actions');
        box.replaceChildren();
        actions(box, name);
    }

    async function timeline() {
        const name = currentName();
        const r = await api('GET', `/v1/leases/${enc(name)}/history?limit=100`);
        const box = $('#detail-timeline');
        if (r.status !== 200) {
            box.textContent = `no history: ${message(r)}`;
            return;
        }
        const grants = r.data.grants;
        if (grants.length === 0) {
            box.textContent = 'no grant of this name since the server started';
            return;
        }
        const t0 = -Math.max(...grants.map((g) => g.granted_ms_ago)) * 1.05;
        const bars = grants.map((g) => ({
            start: -g.granted_ms_ago,
            end: g.ended_ms_ago === null ? 0 : -g.ended_ms_ago,
            token: g.token, owner: g.owner_id, endKind: g.end || 'live',
        }));
        TenureTimeline.render(box, {
            t0: Math.min(t0, -1000), t1: 0, lanes: [{name: name, bars: bars}],
            label: (t) => (t === 0 ? 'now' : fmtMs(-t) + ' ago'),
        });
    }

    function route() {
        const name = currentName();
        $('#overview').hidden = name !== null;
        $('#detail').hidden = name === null;
        if (name === null)
            return;
        $('#detail-name').textContent = name;
        holder();
        timeline();
    }

    window.addEventListener('hashchange', route);
    setInterval(tick, 250);
    setInterval(stats, 2000);
    start();
})();
