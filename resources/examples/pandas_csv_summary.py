# A CSV summary with pandas (runs on Python's scientific runtime: the import picks it).
# Give it your own file with --in sales.csv (it appears as /in/sales.csv); without one it makes a sample.
import os

import pandas as pd

path = "/in/sales.csv"
if not os.path.exists(path):
    path = "sales.csv"  # in /work, the working directory
    rows = ["region,product,units,price"]
    for i in range(60):
        rows.append(f"{['north', 'south', 'east', 'west'][i % 4]},{['tea', 'coffee', 'cocoa'][i % 3]},"
                    f"{5 + (i * 7) % 23},{2.5 + (i % 5) * 0.75}")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")

df = pd.read_csv(path)
df["revenue"] = df["units"] * df["price"]
print(f"{len(df)} rows from {path}\n")
print(df.describe().round(2))
print("\nRevenue by region and product:")
print(df.pivot_table(index="region", columns="product", values="revenue", aggfunc="sum").round(1))
df.groupby("region")["revenue"].sum().to_csv("/out/revenue_by_region.csv")
print("\nwrote /out/revenue_by_region.csv")
