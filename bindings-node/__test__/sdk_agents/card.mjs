// The agent card every test agent here serves, as the @a2a-js/sdk types write one.
export function agentCard(name, url) {
  return {
    name,
    description: `${name}, written against @a2a-js/sdk only`,
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'main', name, description: name, tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
  };
}
