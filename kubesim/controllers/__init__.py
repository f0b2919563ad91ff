"""kube-controller-manager's control loops for the simulated cluster.

``all_controllers()`` returns fresh instances in the order they should run within one pass over a
namespace: namespace termination and garbage collection first (so nothing rebuilds what is going
away), the autoscaler (it sets replicas), then the workload controllers top-down (Deployment →
ReplicaSet → Pod, StatefulSet and DaemonSet → Pod, CronJob → Job → Pod), and Endpoints last so it
sees this pass's pods. The kubelet and scheduler run after these.
"""

from __future__ import annotations

from .cronjob import CronJobController
from .daemonset import DaemonSetController
from .deployment import DeploymentController
from .endpoints import EndpointsController
from .gc import GarbageCollector, delete_with_propagation
from .hpa import HorizontalPodAutoscalerController
from .jobs import JobController
from .namespace import NamespaceController, begin_delete
from .replicaset import ReplicaSetController
from .serviceaccount import ServiceAccountController
from .statefulset import StatefulSetController

__all__ = [
    "CronJobController", "DaemonSetController", "DeploymentController", "EndpointsController", "GarbageCollector",
    "HorizontalPodAutoscalerController", "JobController", "NamespaceController", "ReplicaSetController",
    "ServiceAccountController", "StatefulSetController", "all_controllers", "begin_delete",
    "delete_with_propagation",
]


def all_controllers() -> list:
    return [
        NamespaceController(),
        ServiceAccountController(),
        GarbageCollector(),
        HorizontalPodAutoscalerController(),
        DeploymentController(),
        ReplicaSetController(),
        StatefulSetController(),
        DaemonSetController(),
        CronJobController(),
        JobController(),
        EndpointsController(),
    ]
