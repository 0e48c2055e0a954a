# Draws the Mandelbrot set and writes it to /out/mandelbrot.png: the Files tab shows the picture.
# The PNG is built by hand with struct and zlib (a PNG is a signature plus length-tagged chunks).
import struct
import zlib

WIDTH, HEIGHT, MAX_ITER = 240, 160, 40


def colour(n):
    t = n / MAX_ITER  # a smooth palette: dark blue far out, gold near the edge, black inside
    return (int(9 * (1 - t) * t**3 * 255), int(15 * (1 - t) ** 2 * t**2 * 255), int(8.5 * (1 - t) ** 3 * t * 255))


rows = []
for y in range(HEIGHT):
    row = bytearray([0])  # filter type 0 (none) for each scanline
    ci = (y - HEIGHT / 2) * 2.4 / HEIGHT
    for x in range(WIDTH):
        c = complex((x - WIDTH * 0.65) * 3.4 / WIDTH, ci)
        z, n = 0j, 0
        while abs(z) <= 2 and n < MAX_ITER:
            z = z * z + c
            n += 1
        row += bytes(colour(n))
    rows.append(bytes(row))


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


png = b"\x89PNG\r\n\x1a\n"
png += chunk(b"IHDR", struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0))  # 8-bit RGB
png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
png += chunk(b"IEND", b"")

with open("/out/mandelbrot.png", "wb") as f:
    f.write(png)
print(f"wrote /out/mandelbrot.png: {WIDTH}x{HEIGHT}, {len(png)} bytes")
