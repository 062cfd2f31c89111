"""The agent card every test agent here serves, as the SDK's types write one."""

from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill


def agent_card(name: str, description: str, url: str, skill: str) -> AgentCard:
    return AgentCard(
        name=name,
        description=description,
        version='1.0.0',
        supported_interfaces=[AgentInterface(url=url, protocol_binding='JSONRPC', protocol_version='1.0')],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id=skill, name=skill, description=description, tags=[skill])],
    )
