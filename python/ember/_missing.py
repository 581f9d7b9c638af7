"""What a missing name says: `module.__getattr__ = missing(__name__)` makes `ember.nn.Foo`
(torch.nn.Foo under `python -m ember.run`) an AttributeError that names the torch name and says
ember does not have it yet. It stays an AttributeError, so hasattr() and getattr(m, name, None)
feature checks see the name as absent."""


def torch_name(ember_name):
    """ember.vision.x -> torchvision.x, ember.x -> torch.x."""
    if ember_name == "ember.vision" or ember_name.startswith("ember.vision."):
        return "torchvision" + ember_name[len("ember.vision"):]
    if ember_name == "ember" or ember_name.startswith("ember."):
        return "torch" + ember_name[len("ember"):]
    return ember_name


def missing(module_name):
    """A module-level __getattr__ for names the module lacks."""
    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        raise AttributeError(f"module '{module_name}' has no attribute '{name}': ember does not "
                             f"have {torch_name(module_name)}.{name} yet")
    return __getattr__
