#!/usr/bin/env python3
"""Renders HTML reports in headless Chromium and checks them (scripts/report-check.sh runs it).

Each report is opened as it is, through the DevTools protocol over --remote-debugging-pipe (no extra Python
package): the page's width is set with Emulation.setDeviceMetricsOverride (a window cannot be narrower than 500 px),
console messages, exceptions and requests are collected as events, and one script evaluated after the load measures
the laid-out page (getBBox, getBoundingClientRect). Checked at 1400 and 390 px:
- no console error, no uncaught error, no request for anything outside the page;
- every chart (<svg>) draws at least one mark (an element with class "mark") of non-zero size;
- every SVG text lies inside its SVG's viewBox, and no two texts of one SVG overlap;
- no HTML text box (cells, headings, paragraphs) is wider than its box, and nothing but a scroll box (class
  "scroll") is wider than the viewport.
"""

import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

WIDTHS = [1400, 390]

CHECK = """(function () {
  var found = [];
  var charts = 0;
  function describe(element) {
    var named = element.closest('[data-placement],[id]');
    var where = named ? (named.getAttribute('data-placement') || named.id) : 'page';
    var text = (element.textContent || '').trim().slice(0, 60);
    return where + ': <' + element.tagName.toLowerCase() + '> "' + text + '"';
  }
  performance.getEntriesByType('resource').forEach(function (entry) {
    found.push('external request: ' + entry.name);
  });
  document.querySelectorAll('svg').forEach(function (svg) {
    charts += 1;
    var title = svg.getAttribute('aria-label') || '(untitled chart)';
    var marks = Array.prototype.filter.call(svg.querySelectorAll('.mark'), function (mark) {
      var box = mark.getBBox();
      return box.width > 0 && box.height > 0;
    });
    if (marks.length === 0) found.push('chart "' + title + '" draws no mark');
    var view = svg.viewBox.baseVal;
    if (!view || view.width === 0) {
      found.push('chart "' + title + '" has no viewBox');
      return;
    }
    var boxes = [];
    svg.querySelectorAll('text').forEach(function (text) {
      var box = text.getBBox();
      var shown = Array.prototype.filter.call(text.childNodes, function (node) { return node.nodeType === 3; })
        .map(function (node) { return node.textContent; }).join('');
      if (box.x < view.x - 0.5 || box.y < view.y - 0.5 || box.x + box.width > view.x + view.width + 0.5 ||
          box.y + box.height > view.y + view.height + 0.5) {
        found.push('chart "' + title + '": text "' + shown.slice(0, 60) + '" outside the chart (' +
          [box.x, box.y, box.width, box.height].map(Math.round).join(',') + ' in ' + view.width + 'x' +
          view.height + ')');
      }
      boxes.push({text: shown, box: box});
    });
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i].box, b = boxes[j].box;
        var w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
        var h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
        if (w > 1 && h > 1) {
          found.push('chart "' + title + '": texts overlap: "' + boxes[i].text.slice(0, 40) + '" and "' +
            boxes[j].text.slice(0, 40) + '"');
        }
      }
    }
  });
  var viewport = document.documentElement.clientWidth;
  document.querySelectorAll('body *').forEach(function (element) {
    if (element.closest('svg') || element.closest('script')) return;
    var style = getComputedStyle(element);
    if (style.display === 'none' || style.display === 'inline') return;
    var ownText = Array.prototype.some.call(element.childNodes, function (node) {
      return node.nodeType === 3 && node.textContent.trim() !== '';
    });
    if (ownText && element.scrollWidth > element.clientWidth + 1 && style.overflowX === 'visible') {
      found.push('text wider than its box (' + element.scrollWidth + ' > ' + element.clientWidth + ' px): ' +
        describe(element));
    }
    var scroller = element.closest('.scroll');
    if (!scroller || scroller === element) {
      var rect = element.getBoundingClientRect();
      if (rect.right > viewport + 1 || rect.left < -1) {
        found.push('outside the ' + viewport + ' px viewport (' + Math.round(rect.left) + '…' +
          Math.round(rect.right) + ' px): ' + describe(element));
      }
    }
  });
  // Issue 47 item 3: the summary names a best source with its numbers and interval (or says none is significant);
  // baseline changes carry their interval; long ids wrap in the table cells; the latency axis has ticks.
  document.querySelectorAll('[data-field="best_source"]').forEach(function (cell) {
    var text = cell.textContent.trim();
    if (text !== 'waterfall' && text.indexOf(' CI ') < 0) {
      found.push('best source without its interval: ' + describe(cell));
    }
  });
  if (document.querySelector('[data-field="fill_rate_change"]') &&
      !document.querySelector('[data-field="fill_rate_change_ci"]')) {
    found.push('a baseline change without its interval');
  }
  document.querySelectorAll('td[data-field="errors"],td[data-field="source"]').forEach(function (cell) {
    if (getComputedStyle(cell).whiteSpace === 'nowrap') found.push('a cell that cannot wrap: ' + describe(cell));
  });
  document.querySelectorAll('svg[aria-label="Latency distribution"]').forEach(function (svg) {
    var ticks = Array.prototype.filter.call(svg.querySelectorAll('text'), function (text) {
      return /^[0-9.]+( ms)?$/.test(text.textContent.trim());
    });
    if (ticks.length < 4) found.push('latency axis with ' + ticks.length + ' ticks');
  });
  return JSON.stringify({problems: found, charts: charts, height: document.documentElement.scrollHeight});
})()"""


class DevTools:
    """Chromium over --remote-debugging-pipe: commands on fd 3, answers and events on fd 4, each message JSON ended
    by a NUL byte."""

    def __init__(self, browser):
        self.profile = tempfile.mkdtemp(prefix="report-check-profile-")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()

        def pipes():
            # Copies first, so that neither end is overwritten by the other's dup2.
            commands, answers = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--mute-audio", "--remote-debugging-pipe",
             "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pipes,
            pass_fds=(3, 4))
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def _read(self, deadline):
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.from_browser], [], [], max(0, remaining))
            if not ready:
                raise SystemExit("report-check: chromium did not answer in time")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise SystemExit("report-check: chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit("report-check: %s failed: %s" % (method, answer["error"]))
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(index)
            self.events.append(self._read(deadline))

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except SystemExit:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)


def check(browser, report, width, screenshot_path):
    """Loads `report` at `width` px (a phone's metrics under 500 px) and returns (problems, charts, height)."""
    tools = DevTools(browser)
    try:
        target = tools.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = tools.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ["Page", "Runtime", "Log", "Network"]:
            tools.send(domain + ".enable", session=session)
        tools.send("Emulation.setDeviceMetricsOverride",
                   {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500}, session=session)
        url = "file://" + os.path.abspath(report)
        tools.send("Page.navigate", {"url": url}, session=session)
        tools.wait_for("Page.loadEventFired")
        result = tools.send("Runtime.evaluate", {"expression": CHECK, "returnByValue": True}, session=session)
        findings = json.loads(result["result"]["value"])
        problems = findings["problems"]
        for event in tools.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                problems.append("console error: " + " ".join(str(a.get("value", a.get("description", "")))
                                                             for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                problems.append("uncaught: " + params.get("exceptionDetails", {}).get("text", ""))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                problems.append("console error: " + params["entry"].get("text", ""))
            elif method == "Network.requestWillBeSent":
                requested = params.get("request", {}).get("url", "")
                if requested != url and not requested.startswith("data:"):
                    problems.append("external request: " + requested)
        if screenshot_path and not problems:
            height = max(600, min(findings["height"], 2400))
            shot = tools.send("Page.captureScreenshot",
                              {"format": "png", "captureBeyondViewport": True,
                               "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                              session=session)
            with open(screenshot_path, "wb") as handle:
                handle.write(base64.b64decode(shot["data"]))
        return problems, findings["charts"], findings["height"]
    finally:
        tools.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--browser", required=True)
    parser.add_argument("--screenshots")
    parser.add_argument("reports", nargs="+")
    options = parser.parse_args()
    failed = False
    for report in options.reports:
        for width in WIDTHS:
            stem = os.path.splitext(os.path.basename(report))[0]
            target = None
            if options.screenshots:
                os.makedirs(options.screenshots, exist_ok=True)
                target = os.path.join(options.screenshots, "report-%s-%d.png" % (stem, width))
            problems, charts, height = check(options.browser, report, width, target)
            label = "%s at %d px" % (os.path.basename(report), width)
            if problems:
                failed = True
                print("report-check: FAIL %s: %d problem(s)" % (label, len(problems)))
                for problem in problems[:40]:
                    print("  " + problem)
            else:
                print("report-check: ok %s (%d charts, %d px tall)" % (label, charts, height))
            if target and not problems:
                print("report-check: wrote " + target)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
