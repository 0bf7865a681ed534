"""Candidate structures for `tickinfer study`, trained in the user's own Keras.

The first slimming step is the structure: a 10-feature model rarely needs five hidden layers.
`train_grid` trains one MLP per (depth, width) on the user's data with a fixed seed and saves each
as a .keras file; `prune_candidates` makes fine-tuned pruned twins with tickinfer.pruning (block
1 x 16, the pattern the engine's sparse kernels skip); `tickinfer study` then times every file and
its quantized forms on this machine and scores them on validation data, and names the knee.

    from tickinfer import study
    files = study.train_grid(x_train, y_train, depths=[1, 2, 3, 5], widths=[32, 128], out_dir="cands")
    files += study.prune_candidates(files, x_train, y_train, sparsities=[0.8])
    # tickinfer study --model cands/d2_w128.keras ... --x x_val.npy --y y_val.npy --html study.html

Pure Python over Keras 3 (or tf_keras); no native module is needed.
"""
from __future__ import annotations

import importlib
import importlib.util
import os


def _sibling(name):
    if __package__:  # the installed package
        try:
            return importlib.import_module(f"{__package__}.{name}")
        except ImportError:  # the source tree without the native module
            pass
    return _from_file(name)


def _from_file(name):
    spec = importlib.util.spec_from_file_location(f"tickinfer_{name}", os.path.join(os.path.dirname(__file__), f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _keras():
    import keras
    return keras


def mlp(features: int, depth: int, width: int, regression: bool = False):
    """depth hidden Dense(width, relu) layers (halving from `width` down, at least 8) and one output."""
    keras = _keras()
    layers = [keras.Input((features,))]
    w = width
    for _ in range(depth):
        layers.append(keras.layers.Dense(w, activation="relu"))
        w = max(8, w // 2)
    layers.append(keras.layers.Dense(1, activation=None if regression else "sigmoid"))
    return keras.Sequential(layers)


def train_grid(x, y, depths, widths, out_dir, seed: int = 0, epochs: int = 4, batch_size: int = 256,
               regression: bool = False, learning_rate: float = 1e-3) -> list[str]:
    """Trains one candidate per (depth, width), seeded, and saves out_dir/d{depth}_w{width}.keras."""
    keras = _keras()
    os.makedirs(out_dir, exist_ok=True)
    files = []
    for depth in depths:
        for width in widths:
            keras.utils.set_random_seed(seed)
            m = mlp(x.shape[1], depth, width, regression)
            m.compile(keras.optimizers.Adam(learning_rate), "mse" if regression else "binary_crossentropy")
            m.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0, shuffle=True)
            path = os.path.join(out_dir, f"d{depth}_w{width}.keras")
            m.save(path)
            files.append(path)
    return files


def prune_candidates(files, x, y, sparsities, epochs: int = 3, batch_size: int = 256, block=(1, 16),
                     seed: int = 0, learning_rate: float = 5e-4, regression: bool = False,
                     permute: bool = True) -> list[str]:
    """Fine-tuned pruned twins of each file (PolynomialDecay to each sparsity over the first two
    thirds of the fine-tuning, then held), stripped and saved next to it as <name>_p{percent}.keras.
    With blocks, each candidate's hidden units are first regrouped for them (permute;
    tickinfer.block_permutation: the same function, more of the weights' magnitude kept)."""
    keras = _keras()
    pruning = _sibling("pruning")
    regroup = _sibling("block_permutation") if permute and block is not None else None
    out = []
    steps = epochs * (-(-len(x) // batch_size))
    for path in files:
        for s in sparsities:
            keras.utils.set_random_seed(seed)
            m = keras.models.load_model(path)
            if regroup is not None:
                regroup.permute_units_for_blocks(m, s, block_width=block[1], seed=seed)
            sched = pruning.PolynomialDecay(0.0, s, begin_step=0, end_step=max(1, 2 * steps // 3),
                                            frequency=max(1, steps // 50))
            pm = pruning.prune_low_magnitude(m, sched, block=block)
            pm.compile(keras.optimizers.Adam(learning_rate), "mse" if regression else "binary_crossentropy")
            pm.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0, shuffle=True,
                   callbacks=[pruning.UpdatePruningStep()])
            plain = pruning.strip_pruning(pm)
            dst = path[:-len(".keras")] + f"_p{int(round(100 * s))}.keras"
            plain.save(dst)
            out.append(dst)
    return out
