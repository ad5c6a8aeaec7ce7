"""Importers: PyTorch (torch.export and a torch.compile backend) and ONNX
models to Lamina modules of nn ops. Each needs its optional extra
(`pip install 'lamina[torch]'`, `'lamina[onnx]'`); nothing here imports
torch or onnx until an importer is called."""


def from_torch(model, example_inputs, **options):
    """A Lamina module (nn ops) from `torch.export` of `model` on
    `example_inputs`. See `lamina.importers.torch_import.from_torch`."""
    from lamina.importers.torch_import import from_torch as _from_torch

    return _from_torch(model, example_inputs, **options)


def from_onnx(path, **options):
    """A Lamina module (nn ops) from the ONNX model at `path`. See
    `lamina.importers.onnx_import.from_onnx`."""
    from lamina.importers.onnx_import import from_onnx as _from_onnx

    return _from_onnx(path, **options)


__all__ = ["from_onnx", "from_torch"]
