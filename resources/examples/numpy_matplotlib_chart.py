# numpy and matplotlib: a chart shown in the window (plt.show() saves it as /out/figure-1.png).
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(0, 4 * np.pi, 400)
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
top.plot(x, np.sin(x), label="sin x")
top.plot(x, np.sin(x) * np.exp(-x / 8), label="damped")
top.legend()
top.set_title("Waves")
noise = np.random.default_rng(7).normal(0, 0.2, x.size)
bottom.scatter(x, np.cos(x) + noise, s=4, alpha=0.6)
bottom.plot(x, np.convolve(np.cos(x) + noise, np.ones(25) / 25, mode="same"), color="black")
bottom.set_title("Noisy cosine and its moving average")
fig.tight_layout()
plt.savefig("waves.png", dpi=100)  # relative to /work: a copy lands in /out too
plt.show()
print("matrix product:", (np.arange(6).reshape(2, 3) @ np.arange(6).reshape(3, 2)).tolist())
