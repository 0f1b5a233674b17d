"""Per-family text for the detailed approval form: what changes, what could be lost, how to undo.

Looked up by the ``family.action`` key a family module put on its verdict, longest prefix first.
Plain data; must not import anything but the standard library.
"""

from __future__ import annotations

IMPACTS: dict[str, tuple[str, str, str]] = {
    "kubectl.delete_ns": (
        "The namespace and every object in it (workloads, services, secrets, PVCs).",
        "All data on volumes bound to PVCs in the namespace if their reclaim policy is Delete.",
        "Recreate the namespace and re-apply manifests from git/Helm; restore volumes from backup.",
    ),
    "kubectl.delete_node": (
        "The node object is removed; its pods are rescheduled elsewhere.",
        "Pods with local storage (emptyDir, hostPath) lose that data.",
        "Re-register the node (restart kubelet) or provision a replacement.",
    ),
    "kubectl.delete": (
        "The named Kubernetes objects are deleted; controllers may recreate some of them.",
        "Objects not kept in git or Helm, and PV data when a PVC with a Delete policy goes.",
        "Re-apply the manifests from source control (kubectl apply -f …) or helm rollback.",
    ),
    "helm.uninstall": (
        "The release and every Kubernetes object its chart created are deleted.",
        "PVC data (unless the chart keeps it) and the release history.",
        "helm install the same chart and values again; restore data from backup.",
    ),
    "git.reset_hard": (
        "The branch moves and the working tree is overwritten to match.",
        "Uncommitted changes in tracked files (committed work stays in the reflog ~90 days).",
        "git reflog, then git reset --hard <previous sha>; uncommitted edits are gone.",
    ),
    "git.push_force": (
        "The remote branch is replaced with your local history.",
        "Commits others pushed that you did not have.",
        "Find the old tip (reflog on a clone that had it, or the hosting UI) and push it back.",
    ),
    "git.clean": (
        "Untracked files and directories are deleted from the working tree.",
        "Every untracked file (and ignored files with -x): never committed, so no copy exists.",
        "None from git; restore from backups or editor history.",
    ),
    "git": (
        "Branches, stashes or history are rewritten or deleted.",
        "Unmerged or stashed work.",
        "git reflog / git fsck --lost-found may still find the commits for a while.",
    ),
    "rm": (
        "Files or directory trees are unlinked.",
        "Their contents: there is no trash can on a server.",
        "Restore from backup or snapshot; nothing in the shell undoes rm.",
    ),
    "terraform.destroy": (
        "Every resource in the configuration's state is deleted from the provider.",
        "Databases, disks, buckets and their data unless protected (prevent_destroy, snapshots).",
        "terraform apply recreates empty resources; data only comes back from backups.",
    ),
    "terraform.state_rm": (
        "Resources are removed from state but keep running, unmanaged.",
        "Terraform's knowledge of them (the next apply may create duplicates).",
        "terraform import each resource back into state.",
    ),
    "docker.prune": (
        "Stopped containers, unused networks, dangling (or with -a, all unused) images are deleted.",
        "Images you have no registry copy of; volumes too when --volumes is given.",
        "Pull or rebuild images; recreate containers from compose files.",
    ),
    "docker": (
        "Containers, images or volumes are removed or killed.",
        "Container filesystems and volume data that were not backed up.",
        "Recreate from images/compose files; restore volumes from backup.",
    ),
    "sql.drop": (
        "Tables, schemas or columns are dropped.",
        "All their rows and indexes.",
        "Restore from a database backup or point-in-time recovery.",
    ),
    "sql.truncate": (
        "Every row of the table is removed.",
        "All rows (TRUNCATE is not logged row by row).",
        "Restore from a backup or point-in-time recovery.",
    ),
    "sql": (
        "Rows are deleted or overwritten without a WHERE clause.",
        "Every row's previous values.",
        "Roll back if inside an open transaction; otherwise restore from backup.",
    ),
    "disk": (
        "A disk is formatted, repartitioned or overwritten.",
        "Everything on the device.",
        "Only from backups or disk snapshots.",
    ),
    "dd": (
        "Raw bytes are written to a device.",
        "Everything previously stored where it writes.",
        "Only from backups or disk snapshots.",
    ),
    "pipe": (
        "Code fetched or decoded at run time is executed.",
        "Anything: the code is not visible beforehand.",
        "Unknown until the code is read; download and inspect it first.",
    ),
    "power": (
        "The host shuts down or reboots.",
        "In-flight requests and unsaved state of every process.",
        "Power the host on again; services must come back on their own.",
    ),
    "systemctl": (
        "The unit is masked/killed, or the whole system changes target.",
        "Availability of the service (or host) until reverted.",
        "systemctl unmask / start, or reboot.",
    ),
    "cloud": (
        "Cloud resources are deleted or terminated.",
        "Their data (instances, disks, buckets, records).",
        "Recreate from infrastructure code; restore data from snapshots or backups.",
    ),
    "kill": (
        "Processes are killed without a chance to clean up.",
        "Their in-memory state and open work.",
        "Restart the services (systemctl start …).",
    ),
    "crontab": (
        "Every cron job of the user is removed.",
        "The schedule unless kept in config management.",
        "Re-create it from config management or a backup of /var/spool/cron.",
    ),
    "firewall": (
        "Firewall rules are flushed or replaced.",
        "Network protection, or access (including yours).",
        "iptables-restore from a saved ruleset (iptables-save output).",
    ),
    "pkg": (
        "Packages are removed.",
        "Services that depend on them; config files with purge.",
        "Reinstall the packages; restore purged configuration from backup.",
    ),
    "files": (
        "Permissions, ownership or contents of system files change.",
        "A working host: boot, login and services depend on them.",
        "Restore from backup or a package reinstall.",
    ),
    "forkbomb": (
        "Processes multiply until the host runs out of PIDs and memory.",
        "Responsiveness of the host; may need a hard reboot.",
        "Reboot.",
    ),
    "redirect": (
        "A system path or device is overwritten.",
        "Its previous contents.",
        "Restore from backup or a package reinstall.",
    ),
}

DEFAULT = (
    "The command changes or removes state in a way this classifier rated destructive.",
    "Data or availability that may not be recoverable.",
    "Check backups before approving.",
)


def lookup(key: str) -> tuple[str, str, str]:
    """The impact texts for ``key``: the key itself, then ``family.action``, then ``family``; else DEFAULT.

    ``git.branch_delete`` falls back to ``git``; ``kubectl.delete_all`` to ``kubectl.delete``.
    """
    parts = key.split(".")
    candidates = [key] + [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    family, _, action = key.partition(".")
    if action:
        candidates.insert(1, f"{family}.{action.split('_')[0]}")
    for c in candidates:
        if c in IMPACTS:
            return IMPACTS[c]
    return DEFAULT
