"""Contract-net teaming over ROS 2: thin adapters over `cookwala_ros.teaming` (REASONING 5.4)."""
