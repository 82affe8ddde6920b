"""What a page can read off Streamlit's websocket: when a script run starts and ends, and how.

Shared by the browser tests (``tests/e2e/conftest.py``) and the browser benchmark
(``benchmarks/bench_browser.py``), which both install an init script in every page that records the
app's runs instead of sampling it. :func:`with_forward_msgs` gives such a script the JavaScript
function ``onForwardMsg(handler)``: it wraps ``window.WebSocket`` so that every binary message the
server sends (a ``ForwardMsg``, protobuf) is decoded down to its top-level fields and reported as
``handler(t, kind, status, bytes)`` with ``t = performance.now()``, ``kind`` one of ``"start"`` (field
4, ``new_session``: a run starts), ``"finish"`` (field 6, ``script_finished``; ``status`` is its
value, :data:`FINISHED_EARLY_FOR_RERUN` for a run cut short by a rerun), ``"delta"`` (field 5, an
element) or ``"other"``, and the message's size in bytes.

Plain Python (no Playwright import): the benchmark adds this folder to ``sys.path``.
"""

from __future__ import annotations

__all__ = ["FINISHED_EARLY_FOR_RERUN", "FORWARD_MSG_JS", "HEADLINE_VALUE_JS", "with_forward_msgs"]

#: ``ForwardMsg.ScriptFinishedStatus`` of a run that ended early because a rerun was requested.
FINISHED_EARLY_FOR_RERUN = 2

#: Defines ``onForwardMsg(handler)`` (see the module docstring); to be placed inside a function body.
FORWARD_MSG_JS = r"""
  // Top-level fields of a ForwardMsg (protobuf): 4 = new_session (a run starts), 5 = delta,
  // 6 = script_finished (its value is the status). Varints, length-delimited fields skipped.
  const varint = (b, i) => { let v = 0, m = 1, c; do { c = b[i++]; v += (c & 0x7f) * m; m *= 128; }
                             while (c & 0x80 && i < b.length); return [v, i]; };
  const fields = (buf) => {
    const b = new Uint8Array(buf), out = {};
    let i = 0, tag, v;
    while (i < b.length) {
      [tag, i] = varint(b, i);
      const f = Math.floor(tag / 8), w = tag & 7;
      if (w === 0) { [v, i] = varint(b, i); out[f] = v; }
      else if (w === 2) { [v, i] = varint(b, i); i += v; out[f] = null; }
      else if (w === 1) i += 8; else if (w === 5) i += 4; else break;
    }
    return out;
  };
  const onForwardMsg = (handler) => {
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (e) => {
          if (!(e.data instanceof ArrayBuffer)) return;
          const f = fields(e.data);
          const kind = 4 in f ? 'start' : 6 in f ? 'finish' : 5 in f ? 'delta' : 'other';
          handler(performance.now(), kind, kind === 'finish' ? f[6] : null, e.data.byteLength);
        });
      }
    };
  };
"""


#: Defines ``headlineValue()``: the value element of the main area's W1 headline metric, found by its label
#: ("Distance to the real data (W1)", or a label starting with "W1" as on the low-dimensional page), else
#: null. By its label, not by its place: the metrics of a row load their code one by one, so for a moment
#: the first metric on screen can be the one beside W1 (the theory's bound), which a test once took for W1.
HEADLINE_VALUE_JS = r"""
  const headlineValue = () => {
    const ms = Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stMetric"]'));
    const label = (m) => { const l = m.querySelector('[data-testid="stMetricLabel"]'); return l ? l.textContent.trim() : ''; };
    const m = ms.find((x) => label(x).includes('(W1)') || label(x).startsWith('W1'));
    return m ? m.querySelector('[data-testid="stMetricValue"]') : null;
  };
"""


def with_forward_msgs(body: str) -> str:
    """An init script: ``body`` (JavaScript statements that may call ``onForwardMsg``) run once in a
    function that has :data:`FORWARD_MSG_JS` in scope."""
    return "(() => {" + FORWARD_MSG_JS + body + "\n})();\n"
