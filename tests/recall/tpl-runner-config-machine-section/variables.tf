variable "executor_kind" {
  type    = string
  default = "docker+machine"
}
