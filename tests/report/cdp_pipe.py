"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
no WebSocket library and no open port, only Python's standard library and Debian's `chromium`.

Chromium reads commands from file descriptor 3 and writes replies and events to descriptor 4,
each message one JSON object ended by a NUL byte. The Browser class opens a page target,
attaches to it (flattened sessions) and offers the few calls the report tests need: load a
file, evaluate JavaScript, take a screenshot, and list what the page logged as errors.
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    """The Chromium executable, or None (then the browser tests skip)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, executable, width=1400, height=900, timeout_s=60, internal_pages=False):
        self._timeout = timeout_s
        self._profile = tempfile.mkdtemp(prefix="profview-report-chromium-")
        if internal_pages:
            # chrome://tracing (the trace viewer Chromium ships) is one of the internal pages
            # that chrome://chrome-urls turns on through this preference.
            with open(os.path.join(self._profile, "Local State"), "w") as f:
                json.dump({"internal_only_uis_enabled": True}, f)
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium expects its ends of the pipes as descriptors 3 and 4.
        # (Copied away first: a pipe may already sit on 3 or 4, where dup2 would do nothing and
        # leave it non-inheritable.)
        def child_setup():
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self._process = subprocess.Popen(
            [executable, "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--user-data-dir=" + self._profile, "--window-size=%d,%d" % (width, height),
             "about:blank"],
            # The duplicates made in child_setup are inheritable; everything else the parent
            # opens is not (PEP 446), so close_fds=False passes descriptors 3 and 4 only.
            close_fds=False, preexec_fn=child_setup,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self._events = []
        self._session = None
        self.errors = []  # console errors, uncaught exceptions, failed loads, log errors
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget",
                                  {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable", {})
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    # -- protocol -------------------------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the pipe: " +
                                   self._process.stderr.read().decode(errors="replace")[-2000:])
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _note(self, event):
        method = event.get("method", "")
        params = event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console." + params["type"] + ": " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append("exception: " + details.get("exception", {}).get(
                "description", details.get("text", "")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + params["entry"].get("text", ""))
        elif method == "Network.loadingFailed":
            self.errors.append("load failed: " + params.get("errorText", ""))
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            # The page must be self-contained: any request beyond the file itself is a fault.
            if not url.startswith("file:") and not url.startswith("data:"):
                self.errors.append("network request: " + url)
        self._events.append(event)

    def call(self, method, params=None):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if self._session is not None:
            message["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self._timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(method + ": " + json.dumps(reply["error"]))
                return reply.get("result", {})
            self._note(reply)

    def wait_for(self, method):
        for i, event in enumerate(self._events):
            if event.get("method") == method:
                del self._events[: i + 1]
                return event
        deadline = time.monotonic() + self._timeout
        while True:
            event = self._read_message(deadline)
            self._note(event)
            if event.get("method") == method:
                self._events.clear()
                return event

    # -- what the tests use -----------------------------------------------------------------------
    def load(self, path):
        """Opens a local file and waits for its load event; returns the seconds it took."""
        self._events.clear()
        start = time.monotonic()
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)})
        self.wait_for("Page.loadEventFired")
        return time.monotonic() - start

    def evaluate(self, expression):
        """The value of a JavaScript expression (JSON-serialisable), evaluated in the page."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError("evaluate: " + json.dumps(result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self, path, full_page=True):
        params = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics", {})
            size = metrics.get("cssContentSize", metrics.get("contentSize"))
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                              "scale": 1}
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def screenshot_element(self, selector, path, margin=8):
        """A PNG of one element (the first that `selector` matches), at twice the pixel density
        so that a person can read the details."""
        box = self.evaluate("(() => { const r = document.querySelector(%s)"
                            ".getBoundingClientRect(); return [r.left + window.scrollX, r.top + "
                            "window.scrollY, r.width, r.height]; })()" % json.dumps(selector))
        clip = {"x": max(0, box[0] - margin), "y": max(0, box[1] - margin),
                "width": box[2] + 2 * margin, "height": box[3] + 2 * margin, "scale": 2}
        data = self.call("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                    "captureBeyondViewport": True})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", {}) if self._session is None else None
        except BrowserError:
            pass
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
