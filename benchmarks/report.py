"""`python -m benchmarks.report`: one suite run's JSON as the docs' results page.

The docs' benchmarks page includes the Markdown this writes, and shows the
chart it copies, so every figure on the page comes from one run of
`python -m benchmarks`, with the machine, the date, the commit and the thread
settings of that run. Regenerate the page after a full run:

    python -m benchmarks
    python -m benchmarks.report

Nothing here times anything; it only reads `benchmarks.json`.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

__all__ = ["git_commit", "main", "render"]

DEFAULT_JSON = os.path.join("benchmarks", "results", "benchmarks.json")
DEFAULT_MARKDOWN = os.path.join("benchmarks", "published", "results.md")
DEFAULT_CHART = os.path.join("docs", "assets", "benchmarks.png")


def git_commit():
    """The checked-out commit, with `+changes` if the tree has uncommitted edits, or None."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+changes" if dirty else "")


def _time(micros):
    if micros >= 1e6:
        return f"{micros / 1e6:.2f} s"
    if micros >= 1e4:
        return f"{micros / 1e3:.1f} ms"
    if micros >= 100:
        return f"{micros:.0f} µs"
    return f"{micros:.2f} µs"


def _ratio(value):
    return "–" if value is None else f"{value:.2f}x"


def _run_table(record):
    machine, versions, threads = record["machine"], record["versions"], record["threads"]
    blas = machine.get("numpy_blas") or {}
    peers = []
    for name, peer in record.get("peers", {}).items():
        peers.append(f"{name} {peer['version']}" if peer["status"] == "ok" else f"{name}: skipped")
    settings = record["settings"]
    rows = [
        ("date", record["started_at"]),
        ("commit", record.get("commit") or "not recorded"),
        ("command", f"`{record['command'].strip()}`"),
        ("CPU", f"{machine['cpu_model']}, {machine['nproc']} CPUs, {machine['memory_gib']} GiB"),
        ("load average at start", ", ".join(f"{x:.2f}" for x in machine["load_average"])),
        (
            "software",
            f"Python {versions['python']}, numpy {versions['numpy']} ({blas.get('name')} "
            f"{blas.get('version')}), autograd {versions['autograd']}, "
            f"minikeras {versions['minikeras']}",
        ),
        ("peers", "; ".join(peers) or "none selected"),
        (
            "threads",
            f"{settings['threads']}: "
            + ", ".join(f"`{k}={v}`" for k, v in threads["env"].items())
            + f"; OpenBLAS reports {threads['openblas_num_threads']}; "
            f"CPU affinity {threads.get('cpu_affinity')}",
        ),
        ("sgemm", f"{record['sgemm']['gflops']:.0f} GFLOP/s ({record['sgemm']['size']}³ float32)"),
        (
            "method",
            f"{settings['repeats']} repeats of ~{settings['block_seconds']} s per contender, "
            f"interleaved in a seeded shuffle, each after up to {settings['settling_calls']} "
            f"untimed steps; {settings['warmup']} warm-up round",
        ),
        ("duration", f"{record['seconds']:.0f} s"),
    ]
    lines = ["| | |", "| --- | --- |"]
    lines += [f"| {key} | {value} |" for key, value in rows]
    return lines


def _targets_table(record):
    lines = [
        "| workload | case | contender | ratio to numpy | paired rounds | target | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload, result in record["workloads"].items():
        for case in result.get("cases", []):
            for contender, target in case.get("targets", {}).items():
                lines.append(
                    f"| {workload} | {case['name']} | {contender} | {_ratio(target['ratio'])} "
                    f"| {_ratio(target.get('paired_ratio'))} | ≤ {target['limit']} "
                    f"| {'met' if target['met'] else '**missed**'} |"
                )
    return lines if len(lines) > 2 else ["No case of this run has a target."]


def _case_table(case):
    if case.get("status") == "skipped":
        return [f"Skipped: {case['reason']}."]
    if case["unit"] == "MiB":
        lines = ["| contender | step peak (tracemalloc) | max RSS |", "| --- | --- | --- |"]
        for name, entry in case["contenders"].items():
            if entry["status"] != "ok":
                continue
            traced = entry["step_peak_traced_mib"]
            traced_text = "not visible" if traced is None else f"{traced:.1f} MiB"
            lines.append(f"| {name} | {traced_text} | {entry['max_rss_mib']:.0f} MiB |")
        return lines + _skipped(case)
    fits = case["unit"] == "s per fit"
    header = "| contender | median | IQR | × numpy |" + (" test accuracy |" if fits else "")
    lines = [header, "| --- " * (header.count("|") - 1) + "|"]
    ratios = case.get("ratios_to_numpy") or {}
    for name, entry in case["contenders"].items():
        if entry["status"] != "ok" or "median_us" not in entry:
            continue
        row = (
            f"| {name} | {_time(entry['median_us'])} | {_time(entry['iqr_us'])} "
            f"| {_ratio(ratios.get(name))} |"
        )
        if fits:
            row += f" {100 * entry['accuracy_mean']:.1f}% |"
        lines.append(row)
    return lines + _skipped(case)


def _skipped(case):
    notes = [
        f"- {name}: {entry.get('reason', entry['status'])}"
        for name, entry in case["contenders"].items()
        if entry["status"] != "ok"
    ]
    return ["", "Not in this table:", "", *notes] if notes else []


def render(record):
    """The Markdown of one run: its facts, its targets, and a table per case.

    Args:
        record: the dict `python -m benchmarks` wrote to `benchmarks.json`.

    Returns:
        The Markdown text.
    """
    lines = [
        "<!-- Written by `python -m benchmarks.report` from one `python -m benchmarks` run;"
        " regenerate, do not edit. -->",
        "",
        "### The run",
        "",
        *_run_table(record),
        "",
        "### Targets",
        "",
        *_targets_table(record),
    ]
    for name, result in record["workloads"].items():
        lines += ["", f"### {result.get('title') or name}", ""]
        if result.get("status") == "skipped":
            lines.append(f"Skipped: {result['reason']}.")
            continue
        for case in result["cases"]:
            lines += [f"#### {case['name']}", "", *_case_table(case), ""]
    failures = record.get("failures") or []
    if failures:
        lines += ["### Failures", "", *[f"- {failure}" for failure in failures]]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    """Writes the results Markdown and copies the chart beside the docs.

    Args:
        argv: command-line arguments (`--json`, `--markdown`, `--chart`).

    Returns:
        0 on success, 1 if the run's JSON is missing.
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__)
    parser.add_argument("--json", default=DEFAULT_JSON, help=f"the run (default {DEFAULT_JSON})")
    parser.add_argument("--markdown", default=DEFAULT_MARKDOWN, help="where the tables go")
    parser.add_argument("--chart", default=DEFAULT_CHART, help="where the chart is copied")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.json):
        print(f"no run at {args.json}: run `python -m benchmarks` first", file=sys.stderr)
        return 1
    with open(args.json, encoding="utf-8") as handle:
        record = json.load(handle)
    os.makedirs(os.path.dirname(args.markdown) or ".", exist_ok=True)
    with open(args.markdown, "w", encoding="utf-8") as handle:
        handle.write(render(record))
    chart = record.get("chart", {}).get("path")
    if chart and os.path.isfile(chart):
        os.makedirs(os.path.dirname(args.chart) or ".", exist_ok=True)
        shutil.copyfile(chart, args.chart)
    print(f"wrote {args.markdown}" + (f" and {args.chart}" if chart else " (no chart in the run)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
