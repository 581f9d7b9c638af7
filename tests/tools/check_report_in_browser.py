#!/usr/bin/python3
"""report.html as a browser shows it: headless Chromium (Debian's chromium) loads it without a
console message, and every chart is drawn: in a screenshot, each SVG's area holds ink (pixels
that are not the white background). Exit 77 (CTest's skip) without chromium.
    check_report_in_browser.py REPORT.html"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def chromium(args, html):
    return subprocess.run(
        [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", "--enable-logging=stderr", "--log-level=0",
         "--virtual-time-budget=2000", *args, "file://" + os.path.abspath(html)],
        capture_output=True, text=True, timeout=120)


def main():
    report = sys.argv[1]
    if not shutil.which("chromium"):
        print("skipped: needs chromium (scripts/install-deps test)")
        return 77
    r = chromium(["--dump-dom"], report)
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    if r.returncode != 0 or console:
        print(f"chromium failed ({r.returncode}) or logged console messages:\n" + "\n".join(console))
        return 1
    svgs = re.findall(r"<svg[^>]*width=\"(\d+)\" height=\"(\d+)\"", r.stdout)
    if len(svgs) < 2:
        print(f"expected the report's charts in the DOM, found {len(svgs)} svg elements")
        return 1
    try:
        from PIL import Image
    except ImportError:
        print("skipped: needs python3-pil (scripts/install-deps test)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        shot = os.path.join(tmp, "report.png")
        height = 400 + sum(int(h) + 40 for _, h in svgs) + 1500
        r = chromium([f"--screenshot={shot}", f"--window-size=800,{height}"], report)
        if r.returncode != 0 or not os.path.exists(shot):
            print("chromium could not take a screenshot:\n" + r.stderr[-2000:])
            return 1
        img = Image.open(shot).convert("L")
        w, h = img.size
        # Rows with ink, grouped into bands: the title, the table, and one band per chart at least.
        dark_rows = [y for y in range(h) if min(img.crop((0, y, w, y + 1)).getdata()) < 200]
        ink = sum(1 for p in img.getdata() if p < 200)
    if ink < 5000 or len(dark_rows) < 300:
        print(f"the screenshot is nearly blank: {ink} dark pixels on {len(dark_rows)} rows")
        return 1
    print(f"report.html: no console messages, {len(svgs)} charts, {ink} dark pixels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
