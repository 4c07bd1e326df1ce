# The distributed half of the real-XLA host's Python (src/xla/_distributed.ts):
# _deno_xla_distributed_join(jax, cfg, started) joins a job of several
# processes (jax.distributed.initialize) before jax starts its backend, and
# _deno_xla_distributed_leave(jax, host_id) leaves it when the last host that
# joined closes. Run in the hosted interpreter's __main__ with bridge.py;
# embedded by `deno task embed` into src/xla/_python.generated.ts.

_deno_xla_job = {"cfg": None, "hosts": set(), "ended": False}

def _deno_xla_distributed_key(cfg):
    return (cfg["coordinator"], cfg["numProcesses"], cfg["processId"],
            tuple(cfg["localDeviceIds"] or ()))

def _deno_xla_distributed_join(jax, cfg, started):
    """Joins the job before the backend starts; returns the process's place in it."""
    job = _deno_xla_job
    if job["ended"]:
        raise RuntimeError("FAILED_PRECONDITION: this process left its distributed jax job "
                           "(its last distributed Xla host closed); jax cannot join another: "
                           "start a new process")
    if cfg is None:
        return None if job["cfg"] is None else job["cfg"]
    if job["cfg"] is not None:
        if _deno_xla_distributed_key(job["cfg"]) != _deno_xla_distributed_key(cfg):
            raise RuntimeError("FAILED_PRECONDITION: this process already is process %d of %d "
                               "with coordinator %s; one distributed job per process"
                               % (job["cfg"]["processId"], job["cfg"]["numProcesses"],
                                  job["cfg"]["coordinator"]))
        return job["cfg"]
    if started:
        raise RuntimeError("FAILED_PRECONDITION: jax already started its backend in this "
                           "process without the distributed option; it must be given to the "
                           "first Xla.open of the process")
    if cfg["cpuCollectives"] != "none":
        jax.config.update("jax_cpu_collectives_implementation", cfg["cpuCollectives"])
    kw = {}
    if cfg["bindAddress"]:
        kw["coordinator_bind_address"] = cfg["bindAddress"]
    if cfg["localDeviceIds"] is not None:
        kw["local_device_ids"] = list(cfg["localDeviceIds"])
    t = int(cfg["timeoutS"])
    jax.distributed.initialize(coordinator_address=cfg["coordinator"],
                               num_processes=int(cfg["numProcesses"]),
                               process_id=int(cfg["processId"]),
                               initialization_timeout=t, heartbeat_timeout_seconds=t,
                               shutdown_timeout_seconds=t, **kw)
    job["cfg"] = cfg
    return cfg

def _deno_xla_distributed_info(jax, hid):
    job = _deno_xla_job
    if job["cfg"] is None:
        return None
    job["hosts"].add(hid)
    return {"processIndex": jax.process_index(), "processCount": jax.process_count(),
            "localDeviceCount": jax.local_device_count(),
            "globalDeviceCount": jax.device_count(), "coordinator": job["cfg"]["coordinator"]}

def _deno_xla_distributed_leave(jax, hid):
    """Leaves the job (a barrier with the other processes) when its last host closes."""
    job = _deno_xla_job
    if hid not in job["hosts"]:
        return
    job["hosts"].discard(hid)
    if not job["hosts"] and not job["ended"]:
        job["ended"] = True
        jax.distributed.shutdown()
