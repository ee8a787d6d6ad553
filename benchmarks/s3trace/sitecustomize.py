"""Count every S3 request a process makes, with the boardsweep code that asked for it.

Imported at start-up by every Python process whose ``PYTHONPATH`` holds this
folder (``benchmarks/s3_requests.py`` sets it for the run and its worker
processes); does nothing unless ``BOARDSWEEP_S3_TRACE`` names a folder, where
each process appends one JSON line per request (``op``: botocore's operation,
``key``: the object, ``where``: the innermost boardsweep frames of the call).

The caller is carried into fsspec's and zarr's event loops by a context
variable set where a synchronous call enters the loop (``fsspec.asyn.sync``,
``zarr.core.sync.sync``); a benchmark aid, not part of boardsweep.
"""

from __future__ import annotations

import os

_FOLDER = os.environ.get("BOARDSWEEP_S3_TRACE")


def _install(folder: str) -> None:
    import contextvars
    import json
    import sys
    import traceback
    import warnings

    caller: contextvars.ContextVar[str] = contextvars.ContextVar("boardsweep_s3_caller", default="")
    log = open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", buffering=1)

    def where() -> str:
        frames = [f for f in traceback.extract_stack()[:-2] if f"{os.sep}pipeline{os.sep}" in f.filename]
        return " < ".join(f"{os.path.basename(f.filename)}:{f.name}" for f in reversed(frames[-3:])) or "(outside)"

    import fsspec.asyn as fasyn

    fsspec_sync = fasyn.sync

    def traced_fsspec_sync(loop, func, *args, timeout=None, **kwargs):
        called_from = caller.get() or where()

        async def entered(*a, **k):
            caller.set(called_from)
            return await func(*a, **k)

        return fsspec_sync(loop, entered, *args, timeout=timeout, **kwargs)

    fasyn.sync = traced_fsspec_sync

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import zarr.core.sync as zsync

    zarr_sync = zsync.sync

    def traced_zarr_sync(coroutine, *args, **kwargs):
        called_from = caller.get() or where()

        async def entered():
            caller.set(called_from)
            return await coroutine

        return zarr_sync(entered(), *args, **kwargs)

    for module in list(sys.modules.values()):  # the names zarr bound at its own import
        if getattr(module, "__name__", "").startswith("zarr") and getattr(module, "sync", None) is zarr_sync:
            module.sync = traced_zarr_sync

    from aiobotocore.client import AioBaseClient

    make_api_call = AioBaseClient._make_api_call

    async def traced_call(self, operation_name, api_params):
        key = api_params.get("Key") or api_params.get("Prefix") or ""
        log.write(json.dumps({"op": operation_name, "bucket": api_params.get("Bucket", ""), "key": key,
                              "where": caller.get() or "(no caller)", "argv": " ".join(sys.argv[:2])}) + "\n")
        return await make_api_call(self, operation_name, api_params)

    AioBaseClient._make_api_call = traced_call


if _FOLDER:
    try:
        _install(_FOLDER)
    except ImportError:  # a process without s3fs or zarr: nothing to count
        pass
