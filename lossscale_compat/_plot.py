"""Loss-scale trajectories as a PNG, skipped steps marked: `compare --plot` and the demo (examples/demo.py)."""

from __future__ import annotations

# Up to three lines that should coincide: wide and pale, then narrower, then dotted on top, so all stay visible.
STYLES = (
    {"color": "#c6c6c6", "linewidth": 8},
    {"color": "#e6550d", "linewidth": 3, "linestyle": (0, (4, 2))},
    {"color": "#08306b", "linewidth": 1.2, "linestyle": ":", "marker": "o", "markersize": 3.5},
)


def plot_loss_scales(runs: dict[str, dict[str, tuple[list[float], list[int]]]], path: str, title: str) -> str:
    """Writes `runs` (name -> panel -> (loss scale after each step, skipped steps)) as a PNG; returns the path.

    The first run's skips are marked; another run's skip is marked only where the first run has none.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(runs)
    panels = list(runs[names[0]])
    figure, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for axis, panel in zip(axes[0], panels):
        for name, style in zip(names, STYLES):
            axis.plot(runs[name][panel][0], label=name, drawstyle="steps-post", **style)
        first_skips = runs[names[0]][panel][1]
        for name in names:
            scales, skips = runs[name][panel]
            marks = [s for s in skips if name == names[0] or s not in first_skips]
            axis.plot(
                marks,
                [scales[s] for s in marks],
                "v",
                color="#de2d26",
                markersize=9,
                label="skipped step" if name == names[0] else None,
            )
        axis.set_yscale("log", base=2)
        axis.set_title(f"{panel}: loss scale after each step")
        axis.set_xlabel("step")
        axis.set_ylabel("loss scale")
        axis.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    figure.suptitle(title)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
