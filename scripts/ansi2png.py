"""Render a tmux `capture-pane -e` dump (text with SGR colour sequences) as a PNG.

Usage: ansi2png.py INPUT.ansi OUTPUT.png COLUMNS ROWS

Each cell is drawn on a fixed grid with DejaVu Sans Mono (box drawing included); colours are
the 16 ANSI colours (a dark palette), the 256-colour cube and 24-bit colours. Needs Pillow.
"""

import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SIZE = 15
DEFAULT_FG = (212, 212, 212)
DEFAULT_BG = (30, 30, 30)
ANSI16 = [
    (40, 40, 40), (224, 108, 117), (152, 195, 121), (229, 192, 123),
    (97, 175, 239), (198, 120, 221), (86, 182, 194), (200, 200, 200),
    (110, 110, 110), (240, 128, 138), (172, 215, 141), (245, 212, 143),
    (117, 195, 255), (218, 140, 241), (106, 202, 214), (255, 255, 255),
]


def color256(n):
    if n < 16:
        return ANSI16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


class Pen:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None
        self.bg = None
        self.bold = False
        self.dim = False
        self.italic = False
        self.underline = False
        self.reverse = False

    def apply(self, params):
        ps = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(ps):
            p = ps[i]
            if p == 0:
                self.reset()
            elif p == 1:
                self.bold = True
            elif p == 2:
                self.dim = True
            elif p == 3:
                self.italic = True
            elif p == 4:
                self.underline = True
            elif p == 7:
                self.reverse = True
            elif p == 22:
                self.bold = self.dim = False
            elif p == 23:
                self.italic = False
            elif p == 24:
                self.underline = False
            elif p == 27:
                self.reverse = False
            elif 30 <= p <= 37:
                self.fg = ANSI16[p - 30]
            elif 90 <= p <= 97:
                self.fg = ANSI16[p - 90 + 8]
            elif 40 <= p <= 47:
                self.bg = ANSI16[p - 40]
            elif 100 <= p <= 107:
                self.bg = ANSI16[p - 100 + 8]
            elif p == 39:
                self.fg = None
            elif p == 49:
                self.bg = None
            elif p in (38, 48) and i + 1 < len(ps):
                if ps[i + 1] == 5 and i + 2 < len(ps):
                    c = color256(ps[i + 2])
                    i += 2
                elif ps[i + 1] == 2 and i + 4 < len(ps):
                    c = tuple(ps[i + 2:i + 5])
                    i += 4
                else:
                    c = None
                if p == 38:
                    self.fg = c
                else:
                    self.bg = c
            i += 1

    def colors(self):
        fg = self.fg or DEFAULT_FG
        bg = self.bg or DEFAULT_BG
        if self.reverse:
            fg, bg = bg, fg
        if self.dim:
            fg = tuple((a + b) // 2 for a, b in zip(fg, bg))
        return fg, bg


SGR = re.compile(r"\x1b\[([0-9;]*)m|\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def main():
    src, out, cols, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    text = open(src, encoding="utf-8", errors="replace").read()
    font = ImageFont.truetype(FONT, SIZE)
    bold = ImageFont.truetype(FONT_BOLD, SIZE)
    cw = round(font.getlength("M"))
    ascent, descent = font.getmetrics()
    ch = ascent + descent
    pad = 12
    img = Image.new("RGB", (cols * cw + 2 * pad, rows * ch + 2 * pad), DEFAULT_BG)
    draw = ImageDraw.Draw(img)
    pen = Pen()
    for y, line in enumerate(text.split("\n")[:rows]):
        x = 0
        pos = 0
        for m in list(SGR.finditer(line)) + [None]:
            end = m.start() if m else len(line)
            for c in line[pos:end]:
                if x >= cols:
                    break
                fg, bg = pen.colors()
                px, py = pad + x * cw, pad + y * ch
                draw.rectangle([px, py, px + cw - 1, py + ch - 1], fill=bg)
                if c != " ":
                    f = bold if pen.bold else font
                    draw.text((px, py), c, font=f, fill=fg)
                if pen.underline:
                    draw.line([px, py + ch - 2, px + cw - 1, py + ch - 2], fill=fg)
                x += 1
            if m is None:
                break
            if m.group(1) is not None:
                pen.apply(m.group(1))
            pos = m.end()
        # Fill the rest of the row with the current background (tmux trims trailing blanks).
        if x < cols:
            _, bg = Pen().colors()
            draw.rectangle([pad + x * cw, pad + y * ch, pad + cols * cw - 1, pad + y * ch + ch - 1], fill=bg)
    img.save(out)


if __name__ == "__main__":
    main()
