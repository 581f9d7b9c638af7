"""DatasetFolder and ImageFolder: one class per subfolder of root, classes in sorted order."""
import os

from PIL import Image

from .vision import VisionDataset

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    """Whether filename ends (case-insensitively) with one of extensions."""
    suffixes = extensions if isinstance(extensions, str) else tuple(extensions)
    return filename.lower().endswith(suffixes)


def is_image_file(filename):
    """Whether filename has an image extension (IMG_EXTENSIONS)."""
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    """The sorted subfolder names of directory and {name: index}."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {cls_name: i for i, cls_name in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None):
    """The (path, class index) samples under directory/<class>/, walked in sorted order."""
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the "
                         "same time")
    if extensions is not None:
        def is_valid_file(x):
            return has_file_allowed_extension(x, extensions)

    instances, available_classes = [], set()
    for target_class in sorted(class_to_idx.keys()):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_index))
                    available_classes.add(target_class)

    empty_classes = set(class_to_idx.keys()) - available_classes
    if empty_classes:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty_classes))}. "
        if extensions is not None:
            msg += ("Supported extensions are: "
                    f"{extensions if isinstance(extensions, str) else ', '.join(extensions)}")
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(VisionDataset):
    """Samples root/<class>/**/<file> read by `loader`, targets the class indices."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx, extensions, is_valid_file)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None):
        """The (path, class index) samples; override to read another layout."""
        if class_to_idx is None:
            # make_dataset's own default would bypass an overridden find_classes.
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions,
                            is_valid_file=is_valid_file)

    def find_classes(self, directory):
        """The classes and {class: index}; override to choose the classes another way."""
        return find_classes(directory)

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)


def pil_loader(path):
    """The image at path as an RGB PIL image."""
    with open(path, "rb") as f:  # a file object, so the file is closed at once (Pillow #835)
        img = Image.open(f)
        return img.convert("RGB")


def accimage_loader(path):
    """The image at path through accimage, falling back to PIL."""
    import accimage
    try:
        return accimage.Image(path)
    except OSError:
        return pil_loader(path)


def default_loader(path):
    """The loader of the image backend (ember.vision.set_image_backend): PIL by default."""
    from .. import get_image_backend
    if get_image_backend() == "accimage":
        return accimage_loader(path)
    return pil_loader(path)


class ImageFolder(DatasetFolder):
    """Images root/<class>/**/<image> (IMG_EXTENSIONS unless is_valid_file) as RGB PIL images."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file)
        self.imgs = self.samples
