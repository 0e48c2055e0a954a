# Writes an SVG bar chart to /out/chart.svg: the Files tab renders it as a picture.
data = {"Mon": 3, "Tue": 7, "Wed": 5, "Thu": 9, "Fri": 6}
bar, gap, scale = 40, 16, 20
width = len(data) * (bar + gap) + gap
height = max(data.values()) * scale + 40

parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
         f'<rect width="{width}" height="{height}" fill="#fafafa"/>']
for i, (day, value) in enumerate(data.items()):
    x = gap + i * (bar + gap)
    h = value * scale
    parts.append(f'<rect x="{x}" y="{height - 20 - h}" width="{bar}" height="{h}" fill="#3d7fd9"/>')
    parts.append(f'<text x="{x + bar / 2}" y="{height - 5}" font-size="12" text-anchor="middle">{day}</text>')
parts.append("</svg>")

with open("/out/chart.svg", "w") as f:
    f.write("\n".join(parts))
print("wrote /out/chart.svg")
