// ember.utils.data's C++ part: ember's datasets (TensorDataset, MNIST / Fashion-MNIST) and the C++
// DataLoader over them. Python datasets, samplers and collate_fn are batched in Python
// (python/ember/utils/data).
#include "bind.h"

namespace ember::python {
namespace {

// One pass over a DataLoader, as a Python iterator.
struct LoaderIterator {
  std::shared_ptr<data::DataLoader> loader;
  std::optional<data::DataLoader::Iterator> it;  // empty until the first __next__
};

}  // namespace

void bind_data(py::module_& m) {
  py::module_ d = m.def_submodule("_data", "ember.utils.data's C++ part");
  py::class_<data::Dataset, std::shared_ptr<data::Dataset>>(d, "Dataset")
      .def("__len__", &data::Dataset::size)
      .def("__getitem__", [](const data::Dataset& ds, int64_t i) {
        auto n = static_cast<int64_t>(ds.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n)
          throw py::index_error("index " + std::to_string(i) +
                                " is out of range for a dataset of " + std::to_string(n));
        data::Example e = ds.get(static_cast<size_t>(i));
        return py::make_tuple(e.data, e.target);
      });
  py::class_<data::TensorDataset, data::Dataset, std::shared_ptr<data::TensorDataset>>(
      d, "TensorDataset")
      .def(py::init<Tensor, Tensor>(), "data"_a, "targets"_a);
  py::class_<data::datasets::MNIST, data::Dataset, std::shared_ptr<data::datasets::MNIST>>(
      d, "MNIST", "MNIST or Fashion-MNIST from IDX files (gzipped or not) in root")
      .def(py::init([](const std::string& root, bool train, double mean, double std_dev) {
             data::datasets::MNISTOptions o;
             o.train = train;
             o.mean = mean;
             o.std = std_dev;
             ReleaseGil no_gil;
             return std::make_shared<data::datasets::MNIST>(root, o);
           }),
           "root"_a = data::datasets::kFashionMnistDir, "train"_a = true, "mean"_a = 0.2860,
           "std"_a = 0.3530)
      .def_property_readonly("data", &data::datasets::MNIST::images)
      .def_property_readonly("targets", &data::datasets::MNIST::labels);
  d.def(
      "read_idx", [](const std::string& path) { return data::read_idx(path); }, "path"_a);
  d.attr("FASHION_MNIST_DIR") = data::datasets::kFashionMnistDir;

  py::class_<LoaderIterator>(d, "_LoaderIterator")
      .def("__iter__", [](py::handle self) { return self; })
      .def("__next__", [](LoaderIterator& s) {
        {
          ReleaseGil no_gil;
          if (!s.it) {
            s.it = s.loader->begin();
          } else {
            ++*s.it;
          }
        }
        if (*s.it == s.loader->end()) throw py::stop_iteration();
        return py::make_tuple((*s.it)->data, (*s.it)->target);
      });
  py::class_<data::DataLoader, std::shared_ptr<data::DataLoader>>(
      d, "DataLoader", "Batches of a dataset, in order or shuffled, made by worker threads")
      .def(py::init([](std::shared_ptr<data::Dataset> dataset, size_t batch_size, bool shuffle,
                       size_t num_workers, bool drop_last, bool pin_memory, py::handle seed) {
             EMBER_CHECK_VALUE(batch_size > 0,
                               "[DataLoader] batch_size should be a positive "
                               "integer value, but got batch_size=",
                               batch_size);
             data::DataLoaderOptions o;
             o.batch_size = batch_size;
             o.shuffle = shuffle;
             o.num_workers = num_workers;
             o.drop_last = drop_last;
             o.pin_memory = pin_memory;
             // Without a seed the shuffle follows ember.manual_seed, as PyTorch's follows
             // torch.manual_seed.
             o.seed = seed.is_none() ? default_generator().random64() : seed.cast<uint64_t>();
             return std::make_shared<data::DataLoader>(std::move(dataset), o);
           }),
           "dataset"_a, "batch_size"_a = 1, "shuffle"_a = false, "num_workers"_a = 0,
           "drop_last"_a = false, "pin_memory"_a = false, "seed"_a = py::none())
      .def("__len__", &data::DataLoader::size)
      .def("__iter__",
           [](const std::shared_ptr<data::DataLoader>& self) {
             return LoaderIterator{self, std::nullopt};
           })
      .def_property_readonly("batch_size",
                             [](const data::DataLoader& l) { return l.options().batch_size; });
}

}  // namespace ember::python
