"""Dynamic Resource Allocation's library: DRA's CEL environment (``cel``) and the structured
allocator (``allocator``) of k8s.io/dynamic-resource-allocation, as kube-scheduler v1.34.1 runs
them."""
